import { describe, expect, it } from "vitest"
import { DEFAULT_PHONE_REGIONS, makePhoneDetector } from "../../../../../sdks/typescript/src/tokeniser/detectors/phone.ts"

const phones = (text: string): Array<string> =>
  makePhoneDetector(DEFAULT_PHONE_REGIONS)
    .detect(text)
    .map((s) => text.slice(s.start, s.end))

// The time these take is measured by `npm run bench:engine` (the "digit run" rows), not asserted here.
describe("phone detector on long runs of digit groups", () => {
  it("100 KB of '12 ' holds no phone, and the phones around and inside it are still found", () => {
    const run = "12 ".repeat(17_000)
    const text = `Call +44 20 7946 0958 today.\n${run}0612345678 ${run}\nor (212) 555-0187 tomorrow.`
    expect(text.length).toBeGreaterThan(100_000)
    expect(phones(text)).toEqual(["+44 20 7946 0958", "0612345678", "(212) 555-0187"])
  })

  it("a run of single digits and dots, dashes or brackets gives no phone", () => {
    for (const unit of ["1.", "12-", "(12) ", "1 "]) {
      expect(phones(unit.repeat(30_000)), JSON.stringify(unit)).toEqual([])
    }
  })

  it("each of many mobile numbers in one space-separated run is found once", () => {
    const text = "0612345678 ".repeat(100)
    const found = makePhoneDetector(DEFAULT_PHONE_REGIONS).detect(text)
    expect(found).toHaveLength(100)
    expect(found.map((s) => text.slice(s.start, s.end)).every((p) => p === "0612345678")).toBe(true)
    expect(found.map((s) => s.start)).toEqual(Array.from({ length: 100 }, (_, i) => i * 11))
  })
})
