/**
 * Shape of one upstream provider in the catalogue. Data only; the relay decides what to do with it.
 */
import type { ModelPrices } from "../billing/pricing.ts"

/**
 * A relay route of the gateway (spec: chat completions, Anthropic-format messages, embeddings; and OpenAI's Responses
 * API). A model lists the first three it serves; `responses` is served by every model that serves a conversation
 * route (src/providers/catalogue.ts, upstreamCapabilityFor).
 */
export type Capability = "chat" | "messages" | "embeddings" | "responses"

export const CAPABILITIES: ReadonlyArray<Capability> = ["chat", "messages", "embeddings", "responses"]

/**
 * The formats the gateway's conversation routes speak to clients (`/chat/completions`, `/messages`, `/responses`):
 * OpenAI chat completions, Anthropic messages, OpenAI Responses.
 */
export type ClientWire = "openai" | "anthropic" | "openai-responses"

/**
 * The request/response format an upstream endpoint speaks. A client format, or a provider's own format the gateway
 * only ever speaks upstream: a call to such an endpoint is always translated from the client's format
 * (src/relay/translate/translation.ts has one translator per client format and upstream format).
 */
export type Wire = ClientWire | "gemini" | "bedrock-converse"

/**
 * How the provider key travels: `Authorization: Bearer <key>`, Anthropic's `x-api-key: <key>` or Google's
 * `x-goog-api-key: <key>`; `sigv4`: each request is signed with an AWS key pair (Amazon Bedrock), or, for a Bedrock
 * API key, `Authorization: Bearer <key>`.
 */
export type AuthScheme = "bearer" | "x-api-key" | "x-goog-api-key" | "sigv4"

/** Where and how to call the provider for one route. */
export interface UpstreamEndpoint {
  readonly wire: Wire
  /**
   * Path appended to the provider's base URL (an origin, no trailing slash), e.g. "/v1/chat/completions". A
   * `{model}` in it is replaced by the (URL-encoded) upstream model id, for APIs that name the model in the path.
   */
  readonly path: string
  /** The path of a streamed call when it differs from `path` (same `{model}` rule; may carry a query string). */
  readonly streamPath?: string
  /** The `accept` of a streamed call when the stream is not SSE (Bedrock: `application/vnd.amazon.eventstream`). */
  readonly streamAccept?: string
  readonly auth: AuthScheme
  /** Fixed headers this endpoint requires on every call (e.g. `anthropic-version`). */
  readonly headers: Readonly<Record<string, string>>
  /**
   * A Responses API endpoint that runs OpenAI's hosted tools (web search, file search, computer use, ...). Absent or
   * false: a request naming one is refused (400 `tool_not_supported`), never relayed with the tool dropped.
   */
  readonly hostedTools?: boolean
}

export interface ModelEntry extends ModelPrices {
  /** The `model` value sent upstream and shown in receipts. */
  readonly id: string
  readonly capabilities: ReadonlyArray<Capability>
}

export interface ProviderEntry {
  /** Stable lowercase id used in receipts, env names and routing (`azure-openai`). */
  readonly slug: string
  readonly displayName: string
  /**
   * Default public origin, without `/v1` (DESIGN 8). Overridden by `PROVIDER_<SLUG>_BASE_URL`
   * (and `LOCAL_PROVIDER_URL` for `local`); see `resolveProviderBaseUrl`.
   */
  readonly baseUrl: string
  /**
   * True when `baseUrl` is only a placeholder because the real origin is per customer
   * (Azure resource name, Bedrock region): the provider cannot be called until the operator sets
   * `PROVIDER_<SLUG>_BASE_URL`.
   */
  readonly baseUrlNeedsOverride: boolean
  /** The provider's native wire format. Per-route truth is in `endpoints` (`local` speaks both). */
  readonly wire: Wire
  /** Auth scheme of the native wire. Per-route truth is in `endpoints`. */
  readonly auth: AuthScheme
  /** Offered with the gateway's own (pooled) provider key. */
  readonly pooled: boolean
  /** Every provider accepts a customer's own key. */
  readonly byok: true
  /** Upstream request timeout (whole call, including a stream), in milliseconds. */
  readonly timeoutMs: number
  /** Routes this provider serves, and how. A route missing here is not offered by the provider. */
  readonly endpoints: Readonly<Partial<Record<Capability, UpstreamEndpoint>>>
  readonly models: ReadonlyArray<ModelEntry>
  /** Why this wire/endpoint was chosen, for docs/providers.md readers. */
  readonly notes: string
}
