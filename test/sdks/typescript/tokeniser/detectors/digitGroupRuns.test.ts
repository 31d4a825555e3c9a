import { describe, expect, it } from "vitest"
import { cardDetector } from "../../../../../sdks/typescript/src/tokeniser/detectors/card.ts"
import { digitGroupRuns } from "../../../../../sdks/typescript/src/tokeniser/detectors/digitGroupRuns.ts"

// The pattern the scanner replaces: the specification of a run, and what the card detector matched before.
const RUN_PATTERN = /(?<![\d\-+])\d+(?:(?: \d+)+|(?:-\d+)+)?(?![\d]|-\d)/g

const runsByRegex = (text: string): Array<[number, number]> => [...text.matchAll(RUN_PATTERN)].map((m) => [m.index, m.index + m[0].length])
const runsByScanner = (text: string): Array<[number, number]> => digitGroupRuns(text).map((g) => [g[0]!.start, g[g.length - 1]!.end])

/** A small deterministic generator (mulberry32), so a failure names a text that can be replayed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

describe("digitGroupRuns", () => {
  it("finds exactly the runs the former regex found, on 20,000 random texts of digits, spaces, dashes, plus signs and letters", () => {
    const next = random(41)
    const alphabet = "0123456789  --+a\n"
    for (let n = 0; n < 20_000; n++) {
      const length = 1 + Math.floor(next() * 40)
      let text = ""
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(next() * alphabet.length)]
      expect(runsByScanner(text), JSON.stringify(text)).toEqual(runsByRegex(text))
    }
  })

  it("keeps each group's offsets and digits", () => {
    expect(digitGroupRuns("card 4111 1111-2 x")).toEqual([
      [{ start: 5, end: 9, text: "4111" }],
      [{ start: 10, end: 14, text: "1111" }, { start: 15, end: 16, text: "2" }]
    ])
  })

  it("scans a 10 MB run of 3.4 million groups without overflowing the stack (the regex threw RangeError here)", () => {
    const text = "12 ".repeat(3_400_000)
    expect(() => text.match(RUN_PATTERN)).toThrow(RangeError)
    const runs = digitGroupRuns(text)
    expect(runs).toHaveLength(1)
    expect(runs[0]).toHaveLength(3_400_000)
    expect(cardDetector.detect(text)).toEqual([])
  })

})
