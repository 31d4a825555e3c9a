/**
 * When a relay route's format differs from the format of the provider endpoint serving the model (an OpenAI chat
 * completion for a Claude model, an Anthropic message for a GPT model), the request, the answer and the stream are
 * rewritten between the two. Structural only: fields move, the text inside them is copied and never read, logged
 * or stored.
 */
import type { AttestationRoute } from "../../../sdks/typescript/src/wire/attestation/v3.ts"
import type { Wire } from "../../providers/provider.ts"
import { anthropicRequestToOpenai } from "./anthropicRequestToOpenai.ts"
import { anthropicStreamToOpenai } from "./anthropicStreamToOpenai.ts"
import { openaiRequestToAnthropic } from "./openaiRequestToAnthropic.ts"
import { openaiStreamToAnthropic } from "./openaiStreamToAnthropic.ts"
import { anthropicResponseToOpenai, openaiResponseToAnthropic } from "./responses.ts"
import type { StreamTranslator } from "./streamTranslator.ts"

type Json = Record<string, unknown>

export interface Translation {
  /** The client's format (the route's). */
  readonly from: Wire
  /** The provider endpoint's format. */
  readonly to: Wire
  /** The body to send upstream. Throws `UntranslatableField`. */
  readonly request: (body: Json) => Json
  /** A whole answer in the client's format. Throws `MalformedUpstream`. */
  readonly response: (answer: unknown) => Json
  /** The stream rewriter for a call with this client body (an OpenAI client asks for a usage chunk or not). */
  readonly stream: (clientBody: Json) => StreamTranslator
}

/** The format each conversation route speaks; embeddings are OpenAI-only and never translated. */
export const routeWire = (route: AttestationRoute): Wire | undefined =>
  route === "chat.completions" ? "openai" : route === "messages" ? "anthropic" : undefined

/** OpenAI's own APIs reject `max_tokens` for their newer models; OpenAI-compatible APIs know only `max_tokens`. */
const USES_MAX_COMPLETION_TOKENS = new Set(["openai", "azure-openai"])

export const translationFor = (
  route: AttestationRoute,
  upstream: { readonly wire: Wire; readonly providerSlug: string; readonly model: string }
): Translation | undefined => {
  const from = routeWire(route)
  if (from === undefined || from === upstream.wire) return undefined
  const now = () => Math.floor(Date.now() / 1000)
  if (from === "openai") {
    return {
      from,
      to: upstream.wire,
      request: (body) => openaiRequestToAnthropic(body, upstream.model),
      response: (answer) => anthropicResponseToOpenai(answer, now()),
      stream: (clientBody) => {
        const options = clientBody.stream_options as { include_usage?: unknown } | null | undefined
        return anthropicStreamToOpenai({ includeUsage: options?.include_usage === true, nowSeconds: now() })
      }
    }
  }
  return {
    from,
    to: upstream.wire,
    request: (body) =>
      anthropicRequestToOpenai(body, upstream.model, {
        outputCapField: USES_MAX_COMPLETION_TOKENS.has(upstream.providerSlug) ? "max_completion_tokens" : "max_tokens"
      }),
    response: (answer) => openaiResponseToAnthropic(answer),
    stream: () => openaiStreamToAnthropic()
  }
}
