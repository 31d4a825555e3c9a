/**
 * When a relay route's format differs from the format of the provider endpoint serving the model (an OpenAI chat
 * completion for a Claude model, an Anthropic message for a GPT model, either for a provider with a format of its
 * own), the request, the answer and the stream are rewritten between the two. Structural only: fields move, the
 * text inside them is copied and never read, logged or stored.
 *
 * One translator per (client format, upstream format) pair, in `TRANSLATIONS`: a new upstream format (`Wire`) does
 * not compile until it has a translator from each client format.
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

/**
 * Every (client format -> other upstream format) translator. Nothing is ever translated TO the Responses API: every
 * provider endpoint serving it serves chat completions too, which a chat or messages call goes to.
 */
const TRANSLATIONS: {
  readonly [F in ClientWire]: F extends "openai-responses" ? { readonly [T in Exclude<Wire, F>]?: (upstream: UpstreamCall) => Translation }
    : { readonly [T in Exclude<Wire, F | "openai-responses">]: (upstream: UpstreamCall) => Translation }
} = {
  openai: { anthropic: openaiToAnthropic, gemini: openaiToGemini, "bedrock-converse": toConverse("openai") },
  anthropic: { openai: anthropicToOpenai, gemini: anthropicToGemini, "bedrock-converse": toConverse("anthropic") },
  "openai-responses": {}
}

export const translationFor = (route: AttestationRoute, upstream: UpstreamCall): Translation | undefined => {
  const from = routeWire(route)
  if (from === undefined || from === upstream.wire) return undefined
  const factory = (TRANSLATIONS[from] as Readonly<Partial<Record<Wire, (upstream: UpstreamCall) => Translation>>>)[upstream.wire]
  // Unreachable while TRANSLATIONS is total (the type above); a relay never forwards an untranslated body to it.
  if (factory === undefined) throw new Error(`no translator from ${from} to ${upstream.wire}`)
  return factory(upstream)
}
