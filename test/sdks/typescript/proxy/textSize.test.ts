import { describe, expect, it } from "vitest"
import { textAtMost } from "../../../../sdks/typescript/src/proxy/textSize.ts"

describe("textAtMost: the characters of text in a request body, against a limit", () => {
  const body = { model: "m", messages: [{ role: "user", content: "Say hello." }] }
  // "model" 5 + "m" 1 + "messages" 8 + "role" 4 + "user" 4 + "content" 7 + "Say hello." 10 = 39
  it("counts every string, keys included, nested in objects and arrays", () => {
    expect(textAtMost(body, 39)).toBe(true)
    expect(textAtMost(body, 38)).toBe(false)
  })

  it("numbers, booleans and null add nothing; a bare string is its own length", () => {
    expect(textAtMost({ a: 1, b: true, c: null, d: [2, false] }, 4)).toBe(true)
    expect(textAtMost("x".repeat(10), 9)).toBe(false)
  })

  it("stops reading a large body once the limit is passed", () => {
    let reads = 0
    const parts = new Proxy(Array.from({ length: 100_000 }, () => "x".repeat(100)), {
      get: (target, key, receiver) => {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++
        return Reflect.get(target, key, receiver)
      }
    })
    expect(textAtMost({ messages: [{ role: "user", content: parts }] }, 4_096)).toBe(false)
    // 41 parts of 100 characters pass 4096: nowhere near the 100 000 there are.
    expect(reads).toBeLessThan(50)
  })

  it("a deeply nested body is counted without overflowing the stack", () => {
    let deep: unknown = "x"
    for (let i = 0; i < 200_000; i++) deep = [deep]
    expect(textAtMost(deep, 1)).toBe(true)
    expect(textAtMost(deep, 0)).toBe(false)
  })
})
