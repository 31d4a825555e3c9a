import { describe, expect, it } from "vitest"
import { isWellFormedGatewayKey, keyPrefixOf, newGatewayKey, newPortalToken } from "../../../src/keys/format.ts"

describe("gateway key format", () => {
  it("is svc_ + 52 lowercase base32 characters (256 bits), distinct over 1,000 draws", () => {
    const keys = Array.from({ length: 1000 }, newGatewayKey)
    for (const k of keys) expect(k).toMatch(/^svc_[a-z2-7]{52}$/)
    expect(new Set(keys).size).toBe(1000)
    // every base32 symbol appears: the body really spans the alphabet (entropy, not a fixed pattern)
    const symbols = new Set(keys.join("").replaceAll("svc_", ""))
    expect(symbols.size).toBe(32)
  })

  it("has a prefix of svc_ plus 6 characters, and portal tokens are a separate spt_ family", () => {
    const k = newGatewayKey()
    expect(keyPrefixOf(k)).toBe(k.slice(0, 10))
    const t = newPortalToken()
    expect(t).toMatch(/^spt_[a-z2-7]{52}$/)
    expect(isWellFormedGatewayKey(t)).toBe(false)
    expect(isWellFormedGatewayKey(k)).toBe(true)
    expect(isWellFormedGatewayKey(k.toUpperCase())).toBe(false)
    expect(isWellFormedGatewayKey(k + "a")).toBe(false)
  })
})
