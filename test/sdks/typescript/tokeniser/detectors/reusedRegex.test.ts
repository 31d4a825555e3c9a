import { describe, expect, it } from "vitest"
import { spansFromRegex } from "../../../../../sdks/typescript/src/tokeniser/detectors/Detector.ts"
import { allMatches, withGlobalRegex } from "../../../../../sdks/typescript/src/tokeniser/detectors/reusedRegex.ts"

describe("detector patterns reused across texts", () => {
  it("finds what matchAll finds, empty matches and surrogate pairs included", () => {
    const cases: Array<[string, RegExp]> = [
      ["a1 b22 c333", /\d+/g],
      ["x😀y", /(?:)/gu],
      ["abc", /(?:)/g],
      ["DE89 3704 0044 0532 0130 00 and FR76", /[A-Z]{2}\d{2}/gu]
    ]
    for (const [text, pattern] of cases) {
      const expected = [...text.matchAll(pattern)].map((m) => [m.index, m[0]])
      expect(allMatches(text, pattern).map((m) => [m.index, m[0]])).toEqual(expected)
      // Twice: the reused copy starts again at the beginning of the next text.
      expect(allMatches(text, pattern).map((m) => [m.index, m[0]])).toEqual(expected)
    }
  })

  it("leaves the caller's pattern untouched and adds the global flag to a copy", () => {
    const pattern = /b/
    expect(allMatches("abcb", pattern).map((m) => m.index)).toEqual([1, 3])
    expect(pattern.global).toBe(false)
    expect(pattern.lastIndex).toBe(0)
  })

  it("starts every use at index 0, even after a use stopped midway or threw", () => {
    const pattern = /\d/g
    withGlobalRegex(pattern, (regex) => regex.exec("1 2 3"))
    expect(withGlobalRegex(pattern, (regex) => regex.lastIndex)).toBe(0)
    expect(() => withGlobalRegex(pattern, (regex) => {
      regex.exec("1 2 3")
      throw new Error("stopped")
    })).toThrow("stopped")
    expect(allMatches("7 8", pattern).map((m) => m[0])).toEqual(["7", "8"])
  })

  it("gives a nested use of the same pattern its own copy, so neither loses its place", () => {
    const pattern = /\w/g
    const pairs = spansFromRegex("ab", pattern, "EMAIL", (outer) => {
      const inner = allMatches("xyz", pattern).map((m) => m[0]).join("")
      expect(inner).toBe("xyz")
      return { start: outer.index, end: outer.index + 1 }
    })
    expect(pairs).toEqual([{ start: 0, end: 1, type: "EMAIL" }, { start: 1, end: 2, type: "EMAIL" }])
  })
})
