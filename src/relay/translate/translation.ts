/**
 * When a relay route's format differs from the format of the provider endpoint serving the model (an OpenAI chat
 * completion for a Claude model, an Anthropic message for a GPT model, either for a provider with a format of its
 * own), the request, the answer and the stream are rewritten between the two. Structural only: fields move, the
 * text inside them is copied and never read, logged or stored.
 *
 * One translator per (client format, upstream format) pair, in `TRANSLATIONS`: a new upstream format (`Wire`) does
 * not compile until it has a translator from each client format. OpenAI's Responses API goes to every other format
 * through the chat completion shape (src/relay/translate/responsesChat.ts).
 */
import type { AttestationRoute } from "../../../sdks/typescript/src/wire/attestation/v3.ts"
import type { ClientWire, Wire } from "../../providers/provider.ts"
import { type UpstreamUsage, usageFromJson } from "../usage.ts"
import { anthropicRequestToOpenai } from "./anthropicRequestToOpenai.ts"
import { anthropicStreamToOpenai } from "./anthropicStreamToOpenai.ts"
import { openaiRequestToAnthropic } from "./openaiRequestToAnthropic.ts"
import { openaiStreamToAnthropic } from "./openaiStreamToAnthropic.ts"
import { anthropicGeminiPreflight } from "./anthropicGeminiPreflight.ts"
import { geminiResponseToOpenai, geminiUsage } from "./geminiResponses.ts"
import { geminiStreamToOpenai } from "./geminiStreamToOpenai.ts"
import { openaiRequestToGemini } from "./openaiRequestToGemini.ts"
import { anthropicResponseToOpenai, openaiResponseToAnthropic } from "./responses.ts"
import { openaiResponseToResponses, openaiStreamToResponses, responsesRequestToOpenai } from "./responsesChat.ts"
import type { StreamTranslator } from "./streamTranslator.ts"
import { anthropicRequestToConverse } from "./converse/anthropicRequestToConverse.ts"
import { converseResponseToAnthropic } from "./converse/converseResponseToAnthropic.ts"
import { converseAnswerId, converseResponseToClient, converseStreamToClient, openaiRequestToConverse } from "./converse/converseTranslation.ts"

type Json = Record<string, unknown>

/** The upstream answer's HTTP headers (some formats name the answer only there: Bedrock's `x-amzn-requestid`). */
export type UpstreamHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export interface Translation {
  /** The client's format (the route's). */
  readonly from: ClientWire
  /** The provider endpoint's format: what went upstream (the receipt's `translation.to`). */
  readonly to: Wire
  /** The body to send upstream. Throws `UntranslatableField`. */
  readonly request: (body: Json) => Json
  /** A whole answer in the client's format. Throws `MalformedUpstream`. */
  readonly response: (answer: unknown, headers?: UpstreamHeaders) => Json
  /** The stream rewriter for a call with this client body (an OpenAI client asks for a usage chunk or not). */
  readonly stream: (clientBody: Json, headers?: UpstreamHeaders) => StreamTranslator
  /**
   * What to meter from a whole upstream answer, for an upstream format src/relay/usage.ts does not read (it knows
   * OpenAI and Anthropic bodies). Absent: the relay reads the upstream answer itself.
   */
  readonly usage?: (answer: unknown, headers?: UpstreamHeaders) => UpstreamUsage
}

/** What a translator needs to know about the upstream call. */
export interface UpstreamCall {
  readonly wire: Wire
  readonly providerSlug: string
  readonly model: string
}

/** The format each conversation route speaks; embeddings are OpenAI-only and never translated. */
export const routeWire = (route: AttestationRoute): ClientWire | undefined =>
  route === "chat.completions" ? "openai" : route === "messages" ? "anthropic" : route === "responses" ? "openai-responses" : undefined

/** OpenAI's own APIs reject `max_tokens` for their newer models; OpenAI-compatible APIs know only `max_tokens`. */
const USES_MAX_COMPLETION_TOKENS = new Set(["openai", "azure-openai"])

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** An OpenAI client asked for a final usage chunk (`stream_options.include_usage`). */
export const wantsUsageChunk = (clientBody: Json): boolean => {
  const options = clientBody.stream_options as { include_usage?: unknown } | null | undefined
  return options?.include_usage === true
}

const openaiToAnthropic = (upstream: UpstreamCall): Translation => ({
  from: "openai",
  to: "anthropic",
  request: (body) => openaiRequestToAnthropic(body, upstream.model),
  response: (answer) => anthropicResponseToOpenai(answer, nowSeconds()),
  stream: (clientBody) => anthropicStreamToOpenai({ includeUsage: wantsUsageChunk(clientBody), nowSeconds: nowSeconds() })
})

const anthropicToOpenai = (upstream: UpstreamCall): Translation => ({
  from: "anthropic",
  to: "openai",
  request: (body) =>
    anthropicRequestToOpenai(body, upstream.model, {
      outputCapField: USES_MAX_COMPLETION_TOKENS.has(upstream.providerSlug) ? "max_completion_tokens" : "max_tokens"
    }),
  response: (answer) => openaiResponseToAnthropic(answer),
  stream: () => openaiStreamToAnthropic()
})

/** Bedrock's Converse API, from either client format (src/relay/translate/converse/). */
const toConverse = (from: "openai" | "anthropic") => (upstream: UpstreamCall): Translation => {
  const meta = (headers: UpstreamHeaders | undefined) => ({ id: converseAnswerId(headers), model: upstream.model })
  return {
    from,
    to: "bedrock-converse",
    request: (body) => from === "openai" ? openaiRequestToConverse(body, upstream.model) : anthropicRequestToConverse(body),
    response: (answer, headers) => converseResponseToClient(from, answer, meta(headers), nowSeconds()),
    stream: (clientBody, headers) =>
      converseStreamToClient(from, meta(headers), { includeUsage: wantsUsageChunk(clientBody), nowSeconds: nowSeconds() }),
    usage: (answer, headers) => usageFromJson(converseResponseToAnthropic(answer, meta(headers)))
  }
}

const openaiToGemini = (upstream: UpstreamCall): Translation => ({
  from: "openai",
  to: "gemini",
  request: (body) => openaiRequestToGemini(body),
  response: (answer) => geminiResponseToOpenai(answer, upstream.model, nowSeconds()),
  stream: (clientBody) =>
    geminiStreamToOpenai({ includeUsage: wantsUsageChunk(clientBody), nowSeconds: nowSeconds(), upstreamModel: upstream.model }),
  usage: geminiUsage
})

/**
 * Anthropic -> Gemini through the OpenAI shape: the Messages request is rewritten as a chat completion (refusing
 * what that cannot carry), then as a Gemini request; the answer comes back the same way. One mapping per format
 * pair with the OpenAI shape in the middle keeps the two Gemini translations identical in what they accept.
 */
const anthropicToGemini = (upstream: UpstreamCall): Translation => ({
  from: "anthropic",
  to: "gemini",
  request: (body) => {
    anthropicGeminiPreflight(body)
    return openaiRequestToGemini(anthropicRequestToOpenai(body, upstream.model, { outputCapField: "max_tokens" }))
  },
  response: (answer) => openaiResponseToAnthropic(geminiResponseToOpenai(answer, upstream.model, nowSeconds())),
  stream: () => {
    // The middle step always asks for the usage chunk: the Anthropic stream's message_delta carries the counts.
    const inner = geminiStreamToOpenai({ includeUsage: true, nowSeconds: nowSeconds(), upstreamModel: upstream.model })
    const outer = openaiStreamToAnthropic()
    return {
      push: (text) => outer.push(inner.push(text)),
      complete: () => outer.complete(),
      usage: () => inner.usage!()
    }
  },
  usage: geminiUsage
})

const outputCapField = (upstream: UpstreamCall) => (USES_MAX_COMPLETION_TOKENS.has(upstream.providerSlug) ? "max_completion_tokens" : "max_tokens")

/** OpenAI Responses -> an OpenAI-compatible chat completion endpoint (src/relay/translate/responsesChat.ts). */
const responsesToOpenai = (upstream: UpstreamCall, clientBody: Json): Translation => ({
  from: "openai-responses",
  to: "openai",
  request: (body) => responsesRequestToOpenai(body, upstream.model, { outputCapField: outputCapField(upstream) }),
  response: (answer) => openaiResponseToResponses(answer, clientBody, nowSeconds()),
  stream: () => openaiStreamToResponses({ clientBody, nowSeconds: nowSeconds() })
})

/**
 * OpenAI Responses -> any other upstream format through the chat completion shape, as Anthropic -> Gemini goes: the
 * request rewritten as a chat completion, then by that format's chat translator; the answer comes back the same way.
 * The middle stream always asks for the usage chunk: response.completed carries the usage.
 */
const responsesVia = (chatTo: (upstream: UpstreamCall) => Translation) => (upstream: UpstreamCall, clientBody: Json): Translation => {
  const inner = chatTo(upstream)
  return {
    from: "openai-responses",
    to: inner.to,
    request: (body) => inner.request(responsesRequestToOpenai(body, upstream.model, { outputCapField: "max_tokens" })),
    response: (answer, headers) => openaiResponseToResponses(inner.response(answer, headers), clientBody, nowSeconds()),
    stream: (_clientBody, headers) => {
      const chat = inner.stream({ stream_options: { include_usage: true } }, headers)
      const outer = openaiStreamToResponses({ clientBody, nowSeconds: nowSeconds() })
      return {
        push: (text, bytes) => outer.push(chat.push(text, bytes)),
        complete: () => outer.complete(),
        ...(chat.usage === undefined ? {} : { usage: () => chat.usage!() })
      }
    },
    ...(inner.usage === undefined ? {} : { usage: inner.usage })
  }
}

type Factory = (upstream: UpstreamCall, clientBody: Json) => Translation

/**
 * Every (client format -> other upstream format) translator. Nothing is ever translated TO the Responses API: every
 * provider endpoint serving it serves chat completions too, which a chat or messages call goes to.
 */
const TRANSLATIONS: {
  readonly [F in ClientWire]: { readonly [T in Exclude<Wire, F | "openai-responses">]: Factory }
} = {
  openai: { anthropic: openaiToAnthropic, gemini: openaiToGemini, "bedrock-converse": toConverse("openai") },
  anthropic: { openai: anthropicToOpenai, gemini: anthropicToGemini, "bedrock-converse": toConverse("anthropic") },
  "openai-responses": {
    openai: responsesToOpenai,
    anthropic: responsesVia(openaiToAnthropic),
    gemini: responsesVia(openaiToGemini),
    "bedrock-converse": responsesVia(toConverse("openai"))
  }
}

/** The translation of a call on `route` to `upstream`; `clientBody` is the client's request (a Response echoes it). */
export const translationFor = (route: AttestationRoute, upstream: UpstreamCall, clientBody: Json = {}): Translation | undefined => {
  const from = routeWire(route)
  if (from === undefined || from === upstream.wire) return undefined
  const factory = (TRANSLATIONS[from] as Readonly<Partial<Record<Wire, Factory>>>)[upstream.wire]
  // Unreachable while TRANSLATIONS is total (the type above) and no route is translated to the Responses API.
  if (factory === undefined) throw new Error(`no translator from ${from} to ${upstream.wire}`)
  return factory(upstream, clientBody)
}
