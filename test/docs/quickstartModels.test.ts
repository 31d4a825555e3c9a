// Issue 32 item 3: every snippet that makes a relay call names a model the documented development gateway
// (`npm start`: no provider keys, the built-in fake provider) can call, so it runs as written. A model of a provider
// that gateway has no key for answers 400 `provider_not_configured`. Pages about configuring providers may name
// others: they say what to configure first. (The TypeScript Quickstart also runs for real in
// test/sdks/typescript/pack.test.ts, the Python one in sdks/python/tests/test_examples.py.)
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { findModel, LOCAL_ECONOMY_PROVIDER_SLUG, LOCAL_PROVIDER_SLUG } from "../../src/providers/catalogue.ts"

const ROOT = join(import.meta.dirname, "../..")

/** Pages whose subject is configuring providers, fallbacks or BYOK keys: their snippets say what to set first. */
const CONFIGURE_FIRST = new Set(["docs/providers.md", "docs/routing.md", "docs/byok.md", "docs/decisions.md", "docs/benchmark.md"])

const DOCS = [
  "README.md",
  "sdks/typescript/README.md",
  "sdks/python/README.md",
  "starter-kit/README.md",
  ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)
].filter((name) => !CONFIGURE_FIRST.has(name))

/** A block makes a relay call when it calls one of the relay routes, through an SDK, the proxy or the gateway. */
const RELAY_CALL = /chat\.completions|messages\.create|embeddings\.create|chatCompletion|\/v1\/(chat\/completions|messages|embeddings)|private_completion|private_messages|--model /

const MODEL = /(?<![A-Za-z_])(?:model"?\s*[:=]\s*"|model\s*=\s*'|--model\s+)([A-Za-z0-9][A-Za-z0-9._:/-]*)/g

const callableOnDevelopmentGateway = (model: string): boolean => {
  const lookup = findModel(model)
  return lookup !== undefined && [LOCAL_PROVIDER_SLUG, LOCAL_ECONOMY_PROVIDER_SLUG].includes(lookup.provider.slug)
}

describe("quickstart snippets run against the `npm start` gateway as written", () => {
  it("every model named in a relay call of a README or docs page is served by the built-in fake provider", () => {
    const offending: Array<string> = []
    let checked = 0
    for (const name of DOCS) {
      const text = readFileSync(join(ROOT, name), "utf8")
      for (const block of text.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)) {
        if (!RELAY_CALL.test(block[1]!)) continue
        for (const m of block[1]!.matchAll(MODEL)) {
          checked++
          if (!callableOnDevelopmentGateway(m[1]!)) offending.push(`${name}: ${m[1]}`)
        }
      }
    }
    expect(checked).toBeGreaterThan(10)
    expect(offending).toEqual([])
  })

  it("the check tells a hosted provider's model from the built-in ones", () => {
    expect(callableOnDevelopmentGateway("gpt-4o-mini")).toBe(false)
    expect(callableOnDevelopmentGateway("local-chat")).toBe(true)
    expect(callableOnDevelopmentGateway("local-economy/local-chat")).toBe(true)
    expect(callableOnDevelopmentGateway("local-embed")).toBe(true)
  })
})
