/**
 * The provider catalogue: the built-in `local` provider plus twelve real upstream providers
 * (spec "What the service does" 6: five available pooled and BYOK, seven BYOK-only).
 *
 * Data, not code. Prices are public list prices in USD per million tokens, as decimal strings
 * (money never passes through a float; `src/billing/money.ts` parses them exactly). They were
 * taken from the providers' public pricing pages (standard tier, no batch/cache discounts,
 * short-context rates) and must be re-checked when the catalogue is updated; see docs/providers.md.
 *
 * Model ids are unique within a provider. A bare id may appear at two providers (Azure OpenAI hosts
 * OpenAI's models under the same names); `findModel` resolves a bare id to the first provider in
 * catalogue order that lists it, and `provider/model` (e.g. `azure-openai/gpt-4o`) picks one
 * explicitly.
 */
import type { Capability, ModelEntry, ProviderEntry } from "./provider.ts"
import { anthropicEndpoint, bedrockConverseEndpoint, geminiEndpoint, openaiEndpoint, responsesEndpoint } from "./upstream.ts"

export type { AuthScheme, Capability, ModelEntry, ProviderEntry, UpstreamEndpoint, Wire } from "./provider.ts"
export { CAPABILITIES } from "./provider.ts"
export {
  type Env,
  LOCAL_PROVIDER_URL_ENV,
  providerBaseUrlEnv,
  providerEnvStem,
  providerKeyFileEnv,
  resolveProviderBaseUrl
} from "./env.ts"
export {
  ANTHROPIC_VERSION,
  authHeaderName,
  upstreamAuthHeaders,
  upstreamEndpoint,
  upstreamUrl
} from "./upstream.ts"

export const LOCAL_PROVIDER_SLUG = "local"
export const LOCAL_PROVIDER_DEFAULT_URL = "http://127.0.0.1:8788"

const chat = (id: string, inputUsdPerMTok: string, outputUsdPerMTok: string): ModelEntry => ({
  id,
  capabilities: ["chat"],
  inputUsdPerMTok,
  outputUsdPerMTok
})

const messages = (id: string, inputUsdPerMTok: string, outputUsdPerMTok: string): ModelEntry => ({
  id,
  capabilities: ["messages"],
  inputUsdPerMTok,
  outputUsdPerMTok
})

// Embeddings produce no output tokens; the output price is 0 so the same billing formula applies.
const embed = (id: string, inputUsdPerMTok: string): ModelEntry => ({
  id,
  capabilities: ["embeddings"],
  inputUsdPerMTok,
  outputUsdPerMTok: "0"
})

const openaiChatAndEmbeddings = (prefix: string) => ({
  chat: openaiEndpoint(`${prefix}/chat/completions`),
  embeddings: openaiEndpoint(`${prefix}/embeddings`)
})

export const LOCAL_PROVIDER: ProviderEntry = {
  slug: LOCAL_PROVIDER_SLUG,
  displayName: "Local (built-in fake provider)",
  baseUrl: LOCAL_PROVIDER_DEFAULT_URL,
  baseUrlNeedsOverride: false,
  wire: "openai",
  auth: "bearer",
  pooled: true,
  byok: true,
  timeoutMs: 30_000,
  endpoints: {
    chat: openaiEndpoint("/v1/chat/completions"),
    // The fake provider speaks Anthropic's format natively here, so messages are relayed unchanged.
    messages: anthropicEndpoint("/v1/messages"),
    embeddings: openaiEndpoint("/v1/embeddings"),
    // OpenAI's Responses API, natively (without OpenAI's hosted tools: the fake provider runs none).
    responses: responsesEndpoint("/v1/responses", { hostedTools: false })
  },
  models: [
    { id: "local-chat", capabilities: ["chat", "messages"], inputUsdPerMTok: "1.00", outputUsdPerMTok: "2.00" },
    embed("local-embed", "0.10")
  ],
  notes:
    "Served by whatever LOCAL_PROVIDER_URL points at (programs/fake-provider.ts by default), so a first call works offline. " +
    "OpenAI-format chat, responses and embeddings, Anthropic-format messages."
}

export const LOCAL_ECONOMY_PROVIDER_SLUG = "local-economy"

/**
 * A second built-in provider serving the same `local-chat` model as `local`, cheaper, from the same
 * LOCAL_PROVIDER_URL: the offline stand-in for "one model offered by several providers at different
 * prices", which is what content-blind cost routing chooses between (docs/routing.md). Listed after
 * `local`, so a bare `local-chat` still resolves to `local`.
 */
export const LOCAL_ECONOMY_PROVIDER: ProviderEntry = {
  ...LOCAL_PROVIDER,
  slug: LOCAL_ECONOMY_PROVIDER_SLUG,
  displayName: "Local economy (built-in fake provider, cheaper tier)",
  endpoints: { chat: LOCAL_PROVIDER.endpoints.chat!, messages: LOCAL_PROVIDER.endpoints.messages!, responses: LOCAL_PROVIDER.endpoints.responses! },
  models: [{ id: "local-chat", capabilities: ["chat", "messages"], inputUsdPerMTok: "0.50", outputUsdPerMTok: "1.00" }],
  notes: "The same fake provider as `local` (LOCAL_PROVIDER_URL), with `local-chat` at half the price; exists so cost routing can be tested offline."
}

/** The twelve real upstream providers, pooled+BYOK first, then BYOK-only. */
export const UPSTREAM_PROVIDERS: ReadonlyArray<ProviderEntry> = [
  {
    slug: "openai",
    displayName: "OpenAI",
    baseUrl: "https://api.openai.com",
    baseUrlNeedsOverride: false,
    wire: "openai",
    auth: "bearer",
    pooled: true,
    byok: true,
    timeoutMs: 120_000,
    endpoints: { ...openaiChatAndEmbeddings("/v1"), responses: responsesEndpoint("/v1/responses", { hostedTools: true }) },
    models: [
      chat("gpt-5", "1.25", "10.00"),
      chat("gpt-5-mini", "0.25", "2.00"),
      chat("gpt-4.1", "2.00", "8.00"),
      chat("gpt-4.1-mini", "0.40", "1.60"),
      chat("gpt-4o", "2.50", "10.00"),
      chat("gpt-4o-mini", "0.15", "0.60"),
      embed("text-embedding-3-small", "0.02"),
      embed("text-embedding-3-large", "0.13")
    ],
    notes: "Chat Completions, Responses (with OpenAI's hosted tools) and Embeddings APIs."
  },
  {
    slug: "anthropic",
    displayName: "Anthropic",
    baseUrl: "https://api.anthropic.com",
    baseUrlNeedsOverride: false,
    wire: "anthropic",
    auth: "x-api-key",
    pooled: true,
    byok: true,
    timeoutMs: 300_000,
    endpoints: { messages: anthropicEndpoint("/v1/messages") },
    models: [
      messages("claude-opus-4-1-20250805", "15.00", "75.00"),
      messages("claude-sonnet-4-5-20250929", "3.00", "15.00"),
      messages("claude-haiku-4-5-20251001", "1.00", "5.00"),
      messages("claude-3-5-haiku-20241022", "0.80", "4.00")
    ],
    notes:
      "Messages API only (x-api-key plus anthropic-version). Anthropic's OpenAI-compatibility layer is documented by " +
      "Anthropic as not for production, so Claude models on the chat route are translated to Messages by the gateway."
  },
  {
    slug: "google",
    displayName: "Google Gemini API",
    baseUrl: "https://generativelanguage.googleapis.com",
    baseUrlNeedsOverride: false,
    wire: "gemini",
    auth: "x-goog-api-key",
    pooled: true,
    byok: true,
    timeoutMs: 120_000,
    endpoints: {
      // Gemini's own API for conversations: both relay routes are translated to generateContent.
      chat: geminiEndpoint("/v1beta"),
      // Embeddings stay on the OpenAI-compatible surface (the embeddings route is OpenAI-format only).
      embeddings: openaiEndpoint("/v1beta/openai/embeddings")
    },
    models: [
      chat("gemini-2.5-pro", "1.25", "10.00"),
      chat("gemini-2.5-flash", "0.30", "2.50"),
      chat("gemini-2.0-flash", "0.10", "0.40"),
      embed("gemini-embedding-001", "0.15")
    ],
    notes:
      "Gemini's native generateContent / streamGenerateContent (alt=sse) API with the key in x-goog-api-key; chat " +
      "completions and messages are translated to it. Embeddings use the OpenAI-compatible endpoint " +
      "(/v1beta/openai/embeddings, key as a Bearer token). gemini-2.5-pro is priced at its <=200k-token prompt rate; " +
      "longer prompts cost more upstream than billed here."
  },
  {
    slug: "mistral",
    displayName: "Mistral AI",
    baseUrl: "https://api.mistral.ai",
    baseUrlNeedsOverride: false,
    wire: "openai",
    auth: "bearer",
    pooled: true,
    byok: true,
    timeoutMs: 120_000,
    endpoints: openaiChatAndEmbeddings("/v1"),
    models: [
      chat("mistral-large-latest", "2.00", "6.00"),
      chat("mistral-medium-latest", "0.40", "2.00"),
      chat("mistral-small-latest", "0.10", "0.30"),
      chat("codestral-latest", "0.30", "0.90"),
      embed("mistral-embed", "0.10")
    ],
    notes: "La Plateforme's chat and embeddings APIs follow the OpenAI request/response shape."
  },
  {
    slug: "groq",
    displayName: "Groq",
    baseUrl: "https://api.groq.com",
    baseUrlNeedsOverride: false,
    wire: "openai",
    auth: "bearer",
    pooled: true,
    byok: true,
    timeoutMs: 60_000,
    endpoints: { chat: openaiEndpoint("/openai/v1/chat/completions") },
    models: [
      chat("llama-3.3-70b-versatile", "0.59", "0.79"),
      chat("llama-3.1-8b-instant", "0.05", "0.08"),
      chat("openai/gpt-oss-120b", "0.15", "0.75")
    ],
    notes: "OpenAI-compatible API under /openai/v1; no embeddings endpoint."
  },
  {
    slug: "azure-openai",
    displayName: "Azure OpenAI",
    baseUrl: "https://your-resource.openai.azure.com",
    baseUrlNeedsOverride: true,
    wire: "openai",
    auth: "bearer",
    pooled: false,
    byok: true,
    timeoutMs: 120_000,
    // Azure's v1 API serves the Responses API too; its hosted tools differ from OpenAI's, so none are relayed.
    endpoints: { ...openaiChatAndEmbeddings("/openai/v1"), responses: responsesEndpoint("/openai/v1/responses", { hostedTools: false }) },
    models: [
      chat("gpt-4.1", "2.00", "8.00"),
      chat("gpt-4o", "2.50", "10.00"),
      chat("gpt-4o-mini", "0.15", "0.60"),
      embed("text-embedding-3-small", "0.02")
    ],
    notes:
      "The origin is per customer resource, so PROVIDER_AZURE_OPENAI_BASE_URL must be set. Uses Azure's v1 API " +
      "(/openai/v1, OpenAI-shaped, API key accepted as a Bearer token); the model value is the deployment name, so " +
      "deployments must be named after the model. Prices are Azure global-deployment list prices."
  },
  {
    slug: "aws-bedrock",
    displayName: "Amazon Bedrock",
    baseUrl: "https://bedrock-runtime.us-west-2.amazonaws.com",
    baseUrlNeedsOverride: false,
    wire: "bedrock-converse",
    auth: "sigv4",
    pooled: false,
    byok: true,
    timeoutMs: 120_000,
    // Both conversation routes are translated to Converse (the chat endpoint serves messages through translation).
    endpoints: { chat: bedrockConverseEndpoint() },
    models: [
      chat("anthropic.claude-3-5-haiku-20241022-v1:0", "0.80", "4.00"),
      chat("amazon.nova-pro-v1:0", "0.80", "3.20"),
      chat("amazon.nova-lite-v1:0", "0.06", "0.24"),
      chat("amazon.nova-micro-v1:0", "0.035", "0.14"),
      chat("meta.llama3-3-70b-instruct-v1:0", "0.72", "0.72"),
      chat("openai.gpt-oss-120b-1:0", "0.15", "0.60"),
      chat("openai.gpt-oss-20b-1:0", "0.07", "0.30")
    ],
    notes:
      "Bedrock's native Converse API (POST /model/{modelId}/converse, ConverseStream's AWS event stream for streamed " +
      "calls), requests signed with SigV4 from the organisation's AWS key pair and region (origin " +
      "bedrock-runtime.<region>.amazonaws.com), or a Bedrock API key as Bearer token (origin us-west-2 unless " +
      "PROVIDER_AWS_BEDROCK_BASE_URL is set)."
  },
  {
    slug: "cohere",
    displayName: "Cohere",
    baseUrl: "https://api.cohere.ai",
    baseUrlNeedsOverride: false,
    wire: "openai",
    auth: "bearer",
    pooled: false,
    byok: true,
    timeoutMs: 120_000,
    endpoints: openaiChatAndEmbeddings("/compatibility/v1"),
    models: [
      chat("command-a-03-2025", "2.50", "10.00"),
      chat("command-r-plus-08-2024", "2.50", "10.00"),
      chat("command-r-08-2024", "0.15", "0.60"),
      embed("embed-v4.0", "0.12")
    ],
    notes: "Cohere's Compatibility API (/compatibility/v1), not its native v2 Chat API."
  },
  {
    slug: "together",
    displayName: "Together AI",
    baseUrl: "https://api.together.xyz",
    baseUrlNeedsOverride: false,
    wire: "openai",
    auth: "bearer",
    pooled: false,
    byok: true,
    timeoutMs: 120_000,
    endpoints: openaiChatAndEmbeddings("/v1"),
    models: [
      chat("meta-llama/Llama-3.3-70B-Instruct-Turbo", "0.88", "0.88"),
      chat("deepseek-ai/DeepSeek-V3", "1.25", "1.25"),
      chat("Qwen/Qwen2.5-72B-Instruct-Turbo", "1.20", "1.20"),
      embed("BAAI/bge-large-en-v1.5", "0.02")
    ],
    notes: "OpenAI-compatible API."
  },
  {
    slug: "fireworks",
    displayName: "Fireworks AI",
    baseUrl: "https://api.fireworks.ai",
    baseUrlNeedsOverride: false,
    wire: "openai",
    auth: "bearer",
    pooled: false,
    byok: true,
    timeoutMs: 120_000,
    endpoints: openaiChatAndEmbeddings("/inference/v1"),
    models: [
      chat("accounts/fireworks/models/llama-v3p3-70b-instruct", "0.90", "0.90"),
      chat("accounts/fireworks/models/deepseek-v3", "0.90", "0.90"),
      chat("accounts/fireworks/models/qwen3-235b-a22b", "0.22", "0.88"),
      embed("nomic-ai/nomic-embed-text-v1.5", "0.008")
    ],
    notes: "OpenAI-compatible API under /inference/v1."
  },
  {
    slug: "deepseek",
    displayName: "DeepSeek",
    baseUrl: "https://api.deepseek.com",
    baseUrlNeedsOverride: false,
    wire: "openai",
    auth: "bearer",
    pooled: false,
    byok: true,
    timeoutMs: 300_000,
    endpoints: { chat: openaiEndpoint("/chat/completions") },
    models: [chat("deepseek-chat", "0.28", "0.42"), chat("deepseek-reasoner", "0.28", "0.42")],
    notes: "OpenAI-compatible API at the origin root. Input priced at the cache-miss rate (cache hits cost less upstream)."
  },
  {
    slug: "xai",
    displayName: "xAI",
    baseUrl: "https://api.x.ai",
    baseUrlNeedsOverride: false,
    wire: "openai",
    auth: "bearer",
    pooled: false,
    byok: true,
    timeoutMs: 300_000,
    endpoints: { chat: openaiEndpoint("/v1/chat/completions") },
    models: [chat("grok-4", "3.00", "15.00"), chat("grok-3", "3.00", "15.00"), chat("grok-3-mini", "0.30", "0.50")],
    notes: "OpenAI-compatible API."
  }
]

/** Every provider the gateway can route to: the built-in ones (`local`, `local-economy`) first, then the real ones. */
export const PROVIDERS: ReadonlyArray<ProviderEntry> = [LOCAL_PROVIDER, LOCAL_ECONOMY_PROVIDER, ...UPSTREAM_PROVIDERS]

const providersBySlug: ReadonlyMap<string, ProviderEntry> = new Map(PROVIDERS.map((p) => [p.slug, p]))

export const getProvider = (slug: string): ProviderEntry | undefined => providersBySlug.get(slug)

export interface ModelLookup {
  readonly provider: ProviderEntry
  readonly model: ModelEntry
}

/** Every (provider, model) pair offering this bare model id, in catalogue order. */
export const findModelCandidates = (modelId: string): ReadonlyArray<ModelLookup> =>
  PROVIDERS.flatMap((provider) => {
    const model = provider.models.find((m) => m.id === modelId)
    return model === undefined ? [] : [{ provider, model }]
  })

/**
 * Resolves a requested model name. `provider/model` (e.g. `azure-openai/gpt-4o`) picks that
 * provider when the prefix is a catalogue slug and the rest is one of its models; otherwise the
 * whole string is a bare model id (some contain `/`, e.g. `meta-llama/...`), resolved to the first
 * provider in catalogue order that lists it (local, then pooled providers, then BYOK-only).
 */
export const findModel = (modelId: string): ModelLookup | undefined => {
  const slash = modelId.indexOf("/")
  if (slash > 0) {
    const provider = providersBySlug.get(modelId.slice(0, slash))
    const model = provider?.models.find((m) => m.id === modelId.slice(slash + 1))
    if (provider !== undefined && model !== undefined) return { provider, model }
  }
  return findModelCandidates(modelId)[0]
}

/** The Responses API is served natively by a provider's responses endpoint for every model it offers for chat. */
const servesNatively = (lookup: ModelLookup, route: Capability): boolean =>
  lookup.model.capabilities.includes(route === "responses" ? "chat" : route) && lookup.provider.endpoints[route] !== undefined

/**
 * The endpoints that can serve a conversation route through translation, in order of preference: chat and messages
 * each other's; the Responses API chat completions first (one translation step to an OpenAI-format provider), then
 * messages. Embeddings have none.
 */
const CONVERSATION_COUNTERPARTS: Partial<Record<Capability, ReadonlyArray<Capability>>> = {
  chat: ["messages"],
  messages: ["chat"],
  responses: ["chat", "messages"]
}

/**
 * The provider endpoint a relay route is served from: the route's own when the model offers it there, else another
 * conversation endpoint (the body is translated between the formats), else undefined. A native endpoint always
 * wins, so nothing is translated that need not be.
 */
export const upstreamCapabilityFor = (lookup: ModelLookup, route: Capability): Capability | undefined => {
  if (servesNatively(lookup, route)) return route
  return (CONVERSATION_COUNTERPARTS[route] ?? []).find((other) => servesNatively(lookup, other))
}

/** True when the model can serve the route, natively or through format translation. */
export const modelServesRoute = (lookup: ModelLookup, route: Capability): boolean => upstreamCapabilityFor(lookup, route) !== undefined
