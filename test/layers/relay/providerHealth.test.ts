import { describe, expect, it } from "vitest"
import type { RouteTarget } from "../../../services/ProviderRouter.ts"
import { orderByHealth } from "../../../layers/relay/fallback.ts"
import type { PreparedRequest } from "../../../layers/relay/preparedRequest.ts"
import { createProviderHealth } from "../../../layers/relay/providerHealth.ts"

const candidate = (slug: string): PreparedRequest => ({
  target: { provider: { slug } } as RouteTarget,
  url: "http://127.0.0.1:1/v1/chat/completions",
  body: new Uint8Array(),
  hash: "0".repeat(64),
  translation: undefined,
  modelRewritten: false
})
const slugs = (list: ReadonlyArray<PreparedRequest>) => list.map((c) => c.target.provider.slug)

describe("provider health", () => {
  it("skips a provider that failed until its cool-down has passed, then tries it first again", () => {
    let now = 1_000
    const health = createProviderHealth(30_000, () => now)
    const order = [candidate("anthropic"), candidate("openai"), candidate("local")]
    expect(slugs(orderByHealth(order, health))).toEqual(["anthropic", "openai", "local"])
    health.markFailed("anthropic")
    // Still tried, but last: when every other provider fails too, the call is not lost to the cool-down.
    expect(slugs(orderByHealth(order, health))).toEqual(["openai", "local", "anthropic"])
    now += 29_999
    expect(health.isCoolingDown("anthropic")).toBe(true)
    now += 1
    expect(slugs(orderByHealth(order, health))).toEqual(["anthropic", "openai", "local"])
  })

  it("forgets a failure once the provider answers, and never reorders a call without fallbacks", () => {
    const health = createProviderHealth(30_000)
    health.markFailed("openai")
    expect(slugs(orderByHealth([candidate("openai")], health))).toEqual(["openai"])
    health.markHealthy("openai")
    expect(health.isCoolingDown("openai")).toBe(false)
  })
})
