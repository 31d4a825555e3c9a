import { describe, expect, it } from "vitest"
import { makePrincipalCache } from "../../../src/keys/principalCache.ts"

const principal = (keyId: string) => ({ keyId, orgId: `org_${keyId}` })

const fixture = (options: { maxEntries?: number; ttlMs?: number; enabled?: boolean } = {}) => {
  let now = 1_000
  const cache = makePrincipalCache<ReturnType<typeof principal>>({
    maxEntries: options.maxEntries ?? 100,
    ttlMs: options.ttlMs ?? 30_000,
    now: () => now,
    enabled: options.enabled
  })
  const put = (hash: string, keyId: string) => cache.store(hash, principal(keyId), cache.generation())
  return { cache, put, advance: (ms: number) => (now += ms) }
}

describe("principal cache", () => {
  it("serves a stored principal by hash until its time-to-live has passed", () => {
    const { cache, put, advance } = fixture({ ttlMs: 30_000 })
    put("h1", "k1")
    expect(cache.get("h1")).toEqual(principal("k1"))
    advance(29_999)
    expect(cache.get("h1")).toEqual(principal("k1"))
    advance(1)
    expect(cache.get("h1")).toBeUndefined()
    expect(cache.size()).toBe(0)
  })

  it("keeps at most maxEntries, dropping the least recently used", () => {
    const { cache, put } = fixture({ maxEntries: 2 })
    put("h1", "k1")
    put("h2", "k2")
    expect(cache.get("h1")).toBeDefined() // h1 is now the most recently used
    put("h3", "k3")
    expect(cache.size()).toBe(2)
    expect(cache.get("h2")).toBeUndefined()
    expect(cache.get("h1")).toBeDefined()
    expect(cache.get("h3")).toBeDefined()
  })

  it("evicts by key id, and a dropped entry no longer answers to its id", () => {
    const { cache, put } = fixture({ maxEntries: 1 })
    put("h1", "k1")
    put("h2", "k2") // pushes h1 out by size
    cache.evictKey("k1") // must not touch h2
    expect(cache.get("h2")).toEqual(principal("k2"))
    cache.evictKey("k2")
    expect(cache.get("h2")).toBeUndefined()
  })

  it("refuses a value read before an eviction (the read may have seen the row before the change)", () => {
    const { cache } = fixture()
    const before = cache.generation()
    cache.evictKey("k1") // a change committed while the read was in flight
    cache.store("h1", principal("k1"), before)
    expect(cache.get("h1")).toBeUndefined()
    cache.store("h1", principal("k1"), cache.generation())
    expect(cache.get("h1")).toEqual(principal("k1"))
  })

  it("refuses a value read before a clear", () => {
    const { cache } = fixture()
    const before = cache.generation()
    cache.clear()
    cache.store("h1", principal("k1"), before)
    expect(cache.get("h1")).toBeUndefined()
  })

  it("while disabled serves nothing and stores nothing; turning it on or off empties it", () => {
    const { cache, put } = fixture({ enabled: false })
    put("h1", "k1")
    expect(cache.size()).toBe(0)
    cache.setEnabled(true)
    put("h1", "k1")
    expect(cache.get("h1")).toBeDefined()
    cache.setEnabled(false)
    expect(cache.get("h1")).toBeUndefined()
    cache.setEnabled(true)
    expect(cache.get("h1")).toBeUndefined()
  })
})
