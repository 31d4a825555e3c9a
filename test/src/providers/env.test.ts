import { describe, expect, it } from "vitest"
import { getProvider, LOCAL_PROVIDER, UPSTREAM_PROVIDERS } from "../../../src/providers/catalogue.ts"
import { providerBaseUrlEnv, providerKeyFileEnv, resolveProviderBaseUrl } from "../../../src/providers/env.ts"

const provider = (slug: string) => {
  const found = getProvider(slug)
  if (found === undefined) throw new Error(`no provider ${slug}`)
  return found
}

describe("provider environment names", () => {
  it("upper-cases the slug and turns - into _", () => {
    expect(providerKeyFileEnv("azure-openai")).toBe("PROVIDER_AZURE_OPENAI_API_KEY_FILE")
    expect(providerKeyFileEnv("openai")).toBe("PROVIDER_OPENAI_API_KEY_FILE")
    expect(providerBaseUrlEnv("aws-bedrock")).toBe("PROVIDER_AWS_BEDROCK_BASE_URL")
  })
})

describe("resolveProviderBaseUrl", () => {
  it("uses the catalogue origin when nothing is set", () => {
    expect(resolveProviderBaseUrl(provider("openai"), {})).toBe("https://api.openai.com")
    expect(resolveProviderBaseUrl(LOCAL_PROVIDER, {})).toBe("http://127.0.0.1:8788")
  })

  it("honours PROVIDER_<SLUG>_BASE_URL and strips a trailing slash", () => {
    expect(resolveProviderBaseUrl(provider("openai"), { PROVIDER_OPENAI_BASE_URL: "http://127.0.0.1:9001/" })).toBe(
      "http://127.0.0.1:9001"
    )
    expect(resolveProviderBaseUrl(provider("aws-bedrock"), { PROVIDER_AWS_BEDROCK_BASE_URL: "https://bedrock-runtime.eu-west-1.amazonaws.com" })).toBe(
      "https://bedrock-runtime.eu-west-1.amazonaws.com"
    )
  })

  it("does not apply one provider's override to another", () => {
    expect(resolveProviderBaseUrl(provider("anthropic"), { PROVIDER_OPENAI_BASE_URL: "http://127.0.0.1:9001" })).toBe(
      "https://api.anthropic.com"
    )
  })

  it("ignores empty overrides", () => {
    expect(resolveProviderBaseUrl(provider("groq"), { PROVIDER_GROQ_BASE_URL: "  " })).toBe("https://api.groq.com")
  })

  it("uses LOCAL_PROVIDER_URL for local, ahead of PROVIDER_LOCAL_BASE_URL", () => {
    expect(resolveProviderBaseUrl(LOCAL_PROVIDER, { LOCAL_PROVIDER_URL: "http://127.0.0.1:45678" })).toBe("http://127.0.0.1:45678")
    expect(resolveProviderBaseUrl(LOCAL_PROVIDER, { PROVIDER_LOCAL_BASE_URL: "http://127.0.0.1:1111" })).toBe("http://127.0.0.1:1111")
    expect(
      resolveProviderBaseUrl(LOCAL_PROVIDER, { LOCAL_PROVIDER_URL: "http://127.0.0.1:2222", PROVIDER_LOCAL_BASE_URL: "http://127.0.0.1:1111" })
    ).toBe("http://127.0.0.1:2222")
  })

  it("does not let LOCAL_PROVIDER_URL redirect a real provider", () => {
    for (const p of UPSTREAM_PROVIDERS) {
      expect(resolveProviderBaseUrl(p, { LOCAL_PROVIDER_URL: "http://127.0.0.1:2222" })).not.toBe("http://127.0.0.1:2222")
    }
  })

  it("answers undefined for Azure OpenAI until its per-resource origin is configured", () => {
    const azure = provider("azure-openai")
    expect(azure.baseUrlNeedsOverride).toBe(true)
    expect(resolveProviderBaseUrl(azure, {})).toBeUndefined()
    expect(resolveProviderBaseUrl(azure, { PROVIDER_AZURE_OPENAI_BASE_URL: "https://contoso.openai.azure.com" })).toBe(
      "https://contoso.openai.azure.com"
    )
  })
})
