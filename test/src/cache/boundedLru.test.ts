import { describe, expect, it } from "vitest"
import { BoundedLru } from "../../../src/cache/boundedLru.ts"

describe("BoundedLru", () => {
  it("evicts the least recently used entry once the bound is exceeded", () => {
    const lru = new BoundedLru<string, number>(3)
    lru.set("a", 1)
    lru.set("b", 2)
    lru.set("c", 3)
    expect(lru.get("a")).toBe(1) // a is now the most recent; b is the oldest
    lru.set("d", 4)
    expect(lru.size).toBe(3)
    expect(lru.get("b")).toBeUndefined()
    expect([lru.get("a"), lru.get("c"), lru.get("d")]).toEqual([1, 3, 4])
  })

  it("re-setting an existing key replaces its value without growing", () => {
    const lru = new BoundedLru<string, number>(2)
    lru.set("a", 1)
    lru.set("a", 2)
    lru.set("b", 3)
    expect(lru.size).toBe(2)
    expect(lru.get("a")).toBe(2)
  })

  it("never holds more than its bound", () => {
    const lru = new BoundedLru<number, number>(100)
    for (let i = 0; i < 1000; i++) lru.set(i, i)
    expect(lru.size).toBe(100)
    expect(lru.get(899)).toBeUndefined()
    expect(lru.get(900)).toBe(900)
  })

  it("rejects a bound that is not a positive integer", () => {
    expect(() => new BoundedLru(0)).toThrow(RangeError)
    expect(() => new BoundedLru(1.5)).toThrow(RangeError)
  })

  it("tells onEvict of each entry the bound pushes out, not of delete or clear", () => {
    const evicted: Array<[string, number]> = []
    const lru = new BoundedLru<string, number>(2, (key, value) => evicted.push([key, value]))
    lru.set("a", 1)
    lru.set("b", 2)
    lru.get("a")
    lru.set("c", 3)
    expect(evicted).toEqual([["b", 2]])
    lru.delete("a")
    expect(lru.get("a")).toBeUndefined()
    lru.clear()
    expect(lru.size).toBe(0)
    expect(evicted).toEqual([["b", 2]])
  })
})
