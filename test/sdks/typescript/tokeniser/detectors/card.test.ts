import { describe, expect, it } from "vitest"
import { cardDetector, cardScheme } from "../../../../../sdks/typescript/src/tokeniser/detectors/card.ts"

describe("cardDetector on long runs of numbers", () => {
  it("still finds a card inside a long run of groups and in a long dashed run", () => {
    const card = "4111 1111 1111 1111"
    const text = `${"12 ".repeat(50_000)}x ${card} y ${"7-".repeat(50_000)}8`
    const spans = cardDetector.detect(text)
    expect(spans.map((s) => text.slice(s.start, s.end))).toEqual([card])
  })

  it("knows no scheme whose numbers start with 0, 1, 7, 8 or 9 (the detector skips such windows unjudged)", () => {
    for (const lead of "01789") {
      for (let second = 0; second <= 9; second++) {
        for (let length = 13; length <= 19; length++) {
          expect(cardScheme(`${lead}${second}`.padEnd(length, "0"))).toBeUndefined()
          expect(cardScheme(`${lead}${second}`.padEnd(length, "9"))).toBeUndefined()
        }
      }
    }
  })
})
