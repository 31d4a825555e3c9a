/**
 * Answers the relay's question "for route R on this provider, which URL, wire format and auth
 * headers do I use?" from catalogue data.
 */
import type { AuthScheme, Capability, ProviderEntry, UpstreamEndpoint } from "./provider.ts"
import { type Env, resolveProviderBaseUrl } from "./env.ts"

/** Header Anthropic requires on every Messages API call; pinned so upstream behaviour cannot drift. */
export const ANTHROPIC_VERSION = "2023-06-01"

export const openaiEndpoint = (path: string): UpstreamEndpoint => ({ wire: "openai", path, auth: "bearer", headers: {} })

/** OpenAI's Responses API (`POST /v1/responses`); `hostedTools`: the provider runs OpenAI's built-in tools. */
export const responsesEndpoint = (path: string, options: { readonly hostedTools: boolean }): UpstreamEndpoint => ({
  wire: "openai-responses",
  path,
  auth: "bearer",
  headers: {},
  hostedTools: options.hostedTools
})

export const anthropicEndpoint = (path: string): UpstreamEndpoint => ({
  wire: "anthropic",
  path,
  auth: "x-api-key",
  headers: { "anthropic-version": ANTHROPIC_VERSION }
})

/**
 * Gemini's own generateContent API (https://ai.google.dev/api/generate-content): the model in the path, streaming
 * as server-sent events from streamGenerateContent with `alt=sse`, the key in `x-goog-api-key`.
 */
export const geminiEndpoint = (versionPrefix: string): UpstreamEndpoint => ({
  wire: "gemini",
  path: `${versionPrefix}/models/{model}:generateContent`,
  streamPath: `${versionPrefix}/models/{model}:streamGenerateContent?alt=sse`,
  auth: "x-goog-api-key",
  headers: {}
})

/** The endpoint for a route, or `undefined` when the provider does not serve that route. */
export const upstreamEndpoint = (provider: ProviderEntry, route: Capability): UpstreamEndpoint | undefined =>
  provider.endpoints[route]

const withModel = (path: string, modelId: string | undefined): string =>
  modelId === undefined ? path : path.replaceAll("{model}", encodeURIComponent(modelId))

/**
 * Full upstream URL for a route (for `stream: true` calls, the endpoint's `streamPath` when it has one), or
 * `undefined` when the provider does not serve the route or has no usable base URL (see `resolveProviderBaseUrl`).
 * `modelId` fills a `{model}` in the path.
 */
export const upstreamUrl = (
  provider: ProviderEntry,
  route: Capability,
  env: Env,
  options: { readonly modelId?: string; readonly stream?: boolean } = {}
): string | undefined => {
  const endpoint = upstreamEndpoint(provider, route)
  const baseUrl = resolveProviderBaseUrl(provider, env)
  if (endpoint === undefined || baseUrl === undefined) return undefined
  const path = options.stream === true && endpoint.streamPath !== undefined ? endpoint.streamPath : endpoint.path
  return `${baseUrl}${withModel(path, options.modelId)}`
}

const AUTH_HEADERS: Readonly<Record<AuthScheme, string>> = {
  bearer: "authorization",
  "x-api-key": "x-api-key",
  "x-goog-api-key": "x-goog-api-key",
  // A SigV4 signature travels in Authorization too (added per request by the relay, src/providers/bedrock/sigv4.ts).
  sigv4: "authorization"
}

/** Header carrying the key for an auth scheme (lower-case, as Node's fetch/http normalise them). */
export const authHeaderName = (auth: AuthScheme): string => AUTH_HEADERS[auth]

/** Headers to add to an upstream call: the key in the endpoint's scheme plus its fixed headers. */
export const upstreamAuthHeaders = (endpoint: UpstreamEndpoint, apiKey: string): Record<string, string> => ({
  ...endpoint.headers,
  [authHeaderName(endpoint.auth)]: endpoint.auth === "bearer" || endpoint.auth === "sigv4" ? `Bearer ${apiKey}` : apiKey
})

/** Amazon Bedrock's Converse API: the model in the path, ConverseStream for streamed calls, requests SigV4-signed. */
export const bedrockConverseEndpoint = (): UpstreamEndpoint => ({
  wire: "bedrock-converse",
  path: "/model/{model}/converse",
  streamPath: "/model/{model}/converse-stream",
  streamAccept: "application/vnd.amazon.eventstream",
  auth: "sigv4",
  headers: {}
})
