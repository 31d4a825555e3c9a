import { describe, expect, it } from "vitest"
import { scoreCorpus } from "../../../../sdks/typescript/src/tokeniser/evaluateCorpus.ts"

describe("scoreCorpus", () => {
  it("counts exact matches as hits, boundary errors as one false positive plus one false negative", () => {
    const corpus = [
      { id: 1, text: "mail a@b.io now", spans: [{ type: "EMAIL", start: 5, end: 11 }] },
      { id: 2, text: "no pii here", spans: [] }
    ]
    const result = scoreCorpus(corpus, [
      [{ type: "EMAIL", start: 5, end: 11 }],
      [{ type: "PHONE", start: 0, end: 2 }]
    ])
    expect(result.perType.EMAIL).toMatchObject({ truePositives: 1, falsePositives: 0, falseNegatives: 0 })
    expect(result.perType.PHONE).toMatchObject({ truePositives: 0, falsePositives: 1, precision: 0 })
    expect(result.structured.precision).toBe(0.5)

    const shifted = scoreCorpus(corpus, [[{ type: "EMAIL", start: 5, end: 10 }], []])
    expect(shifted.perType.EMAIL).toMatchObject({ truePositives: 0, falsePositives: 1, falseNegatives: 1 })
  })
})
