import { describe, expect, it } from "vitest"
import { getProvider, LOCAL_PROVIDER, type ProviderEntry } from "../../../src/providers/catalogue.ts"
import { upstreamAuthHeaders, upstreamEndpoint, upstreamUrl } from "../../../src/providers/upstream.ts"

const provider = (slug: string) => {
  const found = getProvider(slug)
  if (found === undefined) throw new Error(`no provider ${slug}`)
  return found
}

describe("upstreamUrl", () => {
  it("joins the resolved origin and the route's path", () => {
    expect(upstreamUrl(provider("openai"), "chat", {})).toBe("https://api.openai.com/v1/chat/completions")
    expect(upstreamUrl(provider("anthropic"), "messages", {})).toBe("https://api.anthropic.com/v1/messages")
    expect(upstreamUrl(provider("google"), "chat", {}, { modelId: "gemini-2.5-flash" })).toBe(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    )
    expect(upstreamUrl(provider("google"), "chat", {}, { modelId: "gemini-2.5-flash", stream: true })).toBe(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    expect(upstreamUrl(provider("google"), "embeddings", {})).toBe("https://generativelanguage.googleapis.com/v1beta/openai/embeddings")
    expect(upstreamUrl(provider("groq"), "chat", {})).toBe("https://api.groq.com/openai/v1/chat/completions")
  })

  it("serves the local provider's three routes from LOCAL_PROVIDER_URL", () => {
    const env = { LOCAL_PROVIDER_URL: "http://127.0.0.1:40001" }
    expect(upstreamUrl(LOCAL_PROVIDER, "chat", env)).toBe("http://127.0.0.1:40001/v1/chat/completions")
    expect(upstreamUrl(LOCAL_PROVIDER, "messages", env)).toBe("http://127.0.0.1:40001/v1/messages")
    expect(upstreamUrl(LOCAL_PROVIDER, "embeddings", env)).toBe("http://127.0.0.1:40001/v1/embeddings")
  })

  it("answers undefined for a route the provider does not serve or an unconfigured origin", () => {
    expect(upstreamUrl(provider("anthropic"), "chat", {})).toBeUndefined()
    expect(upstreamUrl(provider("groq"), "embeddings", {})).toBeUndefined()
    expect(upstreamUrl(provider("azure-openai"), "chat", {})).toBeUndefined()
  })
})

describe("upstreamAuthHeaders", () => {
  it("sends an OpenAI-format key as a Bearer token", () => {
    expect(upstreamAuthHeaders(upstreamEndpoint(provider("openai"), "chat")!, "sk-test")).toEqual({ authorization: "Bearer sk-test" })
  })

  it("sends an Anthropic-format key as x-api-key with the pinned anthropic-version", () => {
    expect(upstreamAuthHeaders(upstreamEndpoint(provider("anthropic"), "messages")!, "sk-ant")).toEqual({
      "x-api-key": "sk-ant",
      "anthropic-version": "2023-06-01"
    })
    expect(upstreamAuthHeaders(upstreamEndpoint(LOCAL_PROVIDER, "messages")!, "k")).toEqual({
      "x-api-key": "k",
      "anthropic-version": "2023-06-01"
    })
  })
})

describe("endpoints that name the model in the path and stream elsewhere", () => {
  // The shape of Gemini's and Bedrock's native APIs: the model in the path, a separate streaming method.
  const modelInPath: ProviderEntry = {
    ...provider("openai"),
    slug: "model-in-path",
    endpoints: {
      chat: {
        wire: "openai",
        path: "/v1beta/models/{model}:generateContent",
        streamPath: "/v1beta/models/{model}:streamGenerateContent?alt=sse",
        auth: "x-goog-api-key",
        headers: {}
      }
    }
  }

  it("fills {model} (URL-encoded) and picks the stream path only for a streamed call", () => {
    expect(upstreamUrl(modelInPath, "chat", {}, { modelId: "gemini-2.5-flash" })).toBe(
      "https://api.openai.com/v1beta/models/gemini-2.5-flash:generateContent"
    )
    expect(upstreamUrl(modelInPath, "chat", {}, { modelId: "a/b:c", stream: true })).toBe(
      "https://api.openai.com/v1beta/models/a%2Fb%3Ac:streamGenerateContent?alt=sse"
    )
    // An endpoint without a stream path streams where it answers.
    expect(upstreamUrl(provider("openai"), "chat", {}, { modelId: "gpt-4o", stream: true })).toBe("https://api.openai.com/v1/chat/completions")
  })

  it("sends a Google key as x-goog-api-key, never as a Bearer token", () => {
    expect(upstreamAuthHeaders(modelInPath.endpoints.chat!, "AIza-test")).toEqual({ "x-goog-api-key": "AIza-test" })
  })
})
