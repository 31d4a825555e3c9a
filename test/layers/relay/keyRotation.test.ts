import { describe, expect, it } from "vitest"
import { createKeyRotation } from "../../../layers/relay/keyRotation.ts"

describe("key rotation", () => {
  it("takes the healthy keys in turn, one call after another", () => {
    const keys = createKeyRotation(30_000, () => 0)
    expect([0, 1, 2, 3].map(() => keys.order("openai", 3)[0])).toEqual([0, 1, 2, 0])
    expect(keys.order("openai", 3)).toEqual([1, 2, 0])
    expect(keys.order("solo", 1)).toEqual([0])
  })

  it("skips a failed key for the cool-down, then takes it again", () => {
    let now = 1_000
    const keys = createKeyRotation(30_000, () => now)
    keys.markFailed("openai", 0)
    expect(keys.order("openai", 2)).toEqual([1])
    expect(keys.order("openai", 2)).toEqual([1])
    now += 30_000
    expect(keys.order("openai", 2)).toEqual([0, 1])
  })

  it("uses the least recently failed key when every key is cooling, and a success clears a key", () => {
    let now = 1_000
    const keys = createKeyRotation(30_000, () => now)
    keys.markFailed("openai", 1)
    now += 10
    keys.markFailed("openai", 0)
    expect(keys.order("openai", 2)).toEqual([1])
    expect(keys.order("openai", 2)).toEqual([1])
    keys.markHealthy("openai", 0)
    expect(keys.order("openai", 2)).toEqual([0])
  })
})
