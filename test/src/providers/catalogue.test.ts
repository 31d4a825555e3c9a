import { describe, expect, it } from "vitest"
import {
  CAPABILITIES,
  findModel,
  findModelCandidates,
  getProvider,
  LOCAL_PROVIDER,
  modelServesRoute,
  upstreamCapabilityFor,
  PROVIDERS,
  UPSTREAM_PROVIDERS
} from "../../../src/providers/catalogue.ts"
import { parseUsd } from "../../../src/billing/money.ts"

const POOLED_AND_BYOK = ["anthropic", "google", "groq", "mistral", "openai"]
const BYOK_ONLY = ["aws-bedrock", "azure-openai", "cohere", "deepseek", "fireworks", "together", "xai"]

describe("provider catalogue", () => {
  it("lists exactly twelve real providers besides the built-in local and local-economy", () => {
    expect(UPSTREAM_PROVIDERS).toHaveLength(12)
    expect(UPSTREAM_PROVIDERS.some((p) => p.slug.startsWith("local"))).toBe(false)
    expect(PROVIDERS).toHaveLength(14)
  })

  it("offers the five pooled+BYOK providers with pooled keys", () => {
    const pooled = UPSTREAM_PROVIDERS.filter((p) => p.pooled).map((p) => p.slug).sort()
    expect(pooled).toEqual(POOLED_AND_BYOK)
  })

  it("offers the seven BYOK-only providers without pooled keys", () => {
    const byokOnly = UPSTREAM_PROVIDERS.filter((p) => !p.pooled).map((p) => p.slug).sort()
    expect(byokOnly).toEqual(BYOK_ONLY)
  })

  it("accepts BYOK on every provider", () => {
    expect(PROVIDERS.every((p) => p.byok === true)).toBe(true)
  })

  it("has unique slugs that are lowercase and env-safe", () => {
    const slugs = PROVIDERS.map((p) => p.slug)
    expect(new Set(slugs).size).toBe(slugs.length)
    for (const slug of slugs) expect(slug).toMatch(/^[a-z][a-z0-9-]*$/)
  })

  it("gives every model prices that parseUsd accepts exactly", () => {
    for (const provider of PROVIDERS) {
      for (const model of provider.models) {
        expect(() => parseUsd(model.inputUsdPerMTok), `${provider.slug}/${model.id} input`).not.toThrow()
        expect(() => parseUsd(model.outputUsdPerMTok), `${provider.slug}/${model.id} output`).not.toThrow()
        expect(parseUsd(model.inputUsdPerMTok), `${provider.slug}/${model.id} is free`).toBeGreaterThan(0n)
      }
    }
  })

  it("prices embedding models with zero output cost and chat models with a positive one", () => {
    for (const provider of PROVIDERS) {
      for (const model of provider.models) {
        if (model.capabilities.includes("embeddings")) expect(parseUsd(model.outputUsdPerMTok)).toBe(0n)
        else expect(parseUsd(model.outputUsdPerMTok)).toBeGreaterThan(0n)
      }
    }
  })

  it("keeps model ids unique within each provider and qualified provider/model ids unique overall", () => {
    const qualified = PROVIDERS.flatMap((p) => {
      const ids = p.models.map((m) => m.id)
      expect(new Set(ids).size, p.slug).toBe(ids.length)
      return ids.map((id) => `${p.slug}/${id}`)
    })
    expect(new Set(qualified).size).toBe(qualified.length)
  })

  it("shares a bare model id between providers only where Azure OpenAI hosts an OpenAI model, or local-economy local-chat", () => {
    const ids = [...new Set(PROVIDERS.flatMap((p) => p.models.map((m) => m.id)))]
    for (const id of ids) {
      const slugs = findModelCandidates(id).map((c) => c.provider.slug)
      if (slugs.length > 1) expect(slugs, id).toEqual(id === "local-chat" ? ["local", "local-economy"] : ["openai", "azure-openai"])
    }
    expect(findModel("local-chat")?.provider.slug).toBe("local")
    expect(findModel("local-economy/local-chat")?.provider.slug).toBe("local-economy")
  })

  it("has no bare model id that reads as another provider's qualified id", () => {
    for (const provider of PROVIDERS) {
      for (const model of provider.models) {
        const found = findModel(model.id)
        expect(found, model.id).toBeDefined()
        // The bare id must resolve to a provider that actually lists it under that exact id.
        expect(found!.model.id, model.id).toBe(model.id)
      }
    }
  })

  it("gives every model at least one capability its provider has an endpoint for", () => {
    for (const provider of PROVIDERS) {
      for (const model of provider.models) {
        expect(model.capabilities.length).toBeGreaterThan(0)
        for (const capability of model.capabilities) {
          expect(CAPABILITIES).toContain(capability)
          expect(provider.endpoints[capability], `${provider.slug}/${model.id} ${capability}`).toBeDefined()
        }
      }
    }
  })

  it("uses real https origins without a path (no /v1) for every real provider", () => {
    for (const provider of UPSTREAM_PROVIDERS) {
      const url = new URL(provider.baseUrl)
      expect(url.protocol, provider.slug).toBe("https:")
      expect(url.pathname, provider.slug).toBe("/")
      expect(provider.baseUrl.endsWith("/"), provider.slug).toBe(false)
    }
  })

  it("sets a positive timeout on every provider", () => {
    for (const provider of PROVIDERS) expect(provider.timeoutMs).toBeGreaterThan(0)
  })

  it("authenticates Anthropic-format endpoints with x-api-key and anthropic-version, Gemini's with x-goog-api-key, Bedrock Converse with SigV4, OpenAI-format ones with Bearer", () => {
    for (const provider of PROVIDERS) {
      for (const endpoint of Object.values(provider.endpoints)) {
        expect(endpoint.path.startsWith("/"), provider.slug).toBe(true)
        if (endpoint.wire === "anthropic") {
          expect(endpoint.auth).toBe("x-api-key")
          expect(endpoint.headers["anthropic-version"]).toBe("2023-06-01")
        } else if (endpoint.wire === "bedrock-converse") {
          expect(endpoint).toMatchObject({ auth: "sigv4", path: "/model/{model}/converse", streamPath: "/model/{model}/converse-stream" })
        } else if (endpoint.wire === "gemini") {
          expect(endpoint.auth).toBe("x-goog-api-key")
          expect(endpoint.path).toContain("{model}")
          expect(endpoint.streamPath).toMatch(/:streamGenerateContent\?alt=sse$/)
        } else {
          expect(endpoint.auth).toBe("bearer")
        }
      }
    }
    expect(getProvider("anthropic")).toMatchObject({ wire: "anthropic", auth: "x-api-key" })
  })
})

describe("built-in local provider", () => {
  it("is pooled, serves all three routes and defaults to the fake provider address", () => {
    expect(LOCAL_PROVIDER.slug).toBe("local")
    expect(LOCAL_PROVIDER.pooled).toBe(true)
    expect(LOCAL_PROVIDER.baseUrl).toBe("http://127.0.0.1:8788")
    expect(LOCAL_PROVIDER.endpoints.chat).toMatchObject({ wire: "openai", path: "/v1/chat/completions" })
    expect(LOCAL_PROVIDER.endpoints.messages).toMatchObject({ wire: "anthropic", path: "/v1/messages" })
    expect(LOCAL_PROVIDER.endpoints.embeddings).toMatchObject({ wire: "openai", path: "/v1/embeddings" })
  })

  it("prices local-chat at $1/$2 per million for chat and messages, local-embed at $0.10 for embeddings", () => {
    const chat = findModel("local-chat")
    expect(chat?.provider.slug).toBe("local")
    expect(chat?.model).toMatchObject({ inputUsdPerMTok: "1.00", outputUsdPerMTok: "2.00" })
    expect([...chat!.model.capabilities].sort()).toEqual(["chat", "messages"])
    const embed = findModel("local-embed")
    expect(embed?.model).toMatchObject({ inputUsdPerMTok: "0.10", capabilities: ["embeddings"] })
    expect(parseUsd(embed!.model.inputUsdPerMTok)).toBe(100_000n)
  })
})

describe("findModel", () => {
  it("resolves a bare id to its provider", () => {
    expect(findModel("claude-sonnet-4-5-20250929")?.provider.slug).toBe("anthropic")
    expect(findModel("deepseek-chat")?.provider.slug).toBe("deepseek")
  })

  it("resolves bare ids that contain a slash", () => {
    expect(findModel("meta-llama/Llama-3.3-70B-Instruct-Turbo")?.provider.slug).toBe("together")
    expect(findModel("accounts/fireworks/models/deepseek-v3")?.provider.slug).toBe("fireworks")
    expect(findModel("openai/gpt-oss-120b")?.provider.slug).toBe("groq")
  })

  it("resolves a shared bare id to the first provider in catalogue order and provider/model to the named one", () => {
    expect(findModel("gpt-4o")?.provider.slug).toBe("openai")
    const azure = findModel("azure-openai/gpt-4o")
    expect(azure?.provider.slug).toBe("azure-openai")
    expect(azure?.model.id).toBe("gpt-4o")
    expect(findModel("openai/gpt-4o")?.provider.slug).toBe("openai")
  })

  it("answers undefined for unknown models and for a provider prefix with a model it does not list", () => {
    expect(findModel("no-such-model")).toBeUndefined()
    expect(findModel("anthropic/gpt-4o")).toBeUndefined()
    expect(findModel("")).toBeUndefined()
  })

  it("tells whether a model serves a route", () => {
    expect(modelServesRoute(findModel("local-chat")!, "messages")).toBe(true)
    expect(modelServesRoute(findModel("local-chat")!, "embeddings")).toBe(false)
    expect(modelServesRoute(findModel("local-embed")!, "chat")).toBe(false)
    // Chat and messages are one conversation in two formats: the other route is served by translation.
    expect(modelServesRoute(findModel("gpt-4o")!, "messages")).toBe(true)
    expect(modelServesRoute(findModel("claude-haiku-4-5-20251001")!, "chat")).toBe(true)
    expect(modelServesRoute(findModel("claude-haiku-4-5-20251001")!, "embeddings")).toBe(false)
  })

  it("serves a route from the model's native endpoint first, else from the other conversation format", () => {
    expect(upstreamCapabilityFor(findModel("local-chat")!, "messages")).toBe("messages")
    expect(upstreamCapabilityFor(findModel("local-chat")!, "chat")).toBe("chat")
    expect(upstreamCapabilityFor(findModel("gpt-4o")!, "messages")).toBe("chat")
    expect(upstreamCapabilityFor(findModel("claude-haiku-4-5-20251001")!, "chat")).toBe("messages")
    expect(upstreamCapabilityFor(findModel("text-embedding-3-small")!, "chat")).toBeUndefined()
  })
})
