import { describe, expect, it } from "vitest"
import { emailDetector } from "../../../../../sdks/typescript/src/tokeniser/detectors/email.ts"

describe("emailDetector on long dotted runs", () => {
  it("scans 12 MB of dotted atoms without overflowing the regex stack and still finds the address after them", () => {
    for (const shape of ["a.", "1.", "x@a."]) {
      const text = `${shape.repeat(12_000_000 / shape.length)} write to me@example.com`
      const spans = emailDetector.detect(text)
      expect(spans.map((s) => text.slice(s.start, s.end)), shape).toContain("me@example.com")
    }
  })

  it("still finds addresses with many dot-atoms and many domain labels", () => {
    const address = `${Array.from({ length: 30 }, (_, i) => `p${i}`).join(".")}@${Array.from({ length: 40 }, (_, i) => `d${i}`).join(".")}.example`
    const text = `mail ${address} now`
    expect(emailDetector.detect(text).map((s) => text.slice(s.start, s.end))).toEqual([address])
  })
})
