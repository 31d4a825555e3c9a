import { readFileSync } from "node:fs"
import { beforeAll, describe, expect, it } from "vitest"
import { scoreCorpus, type CorpusScore, type LabelledSentence } from "../../../../sdks/typescript/src/tokeniser/evaluateCorpus.ts"
import { createSession, detectSpans } from "../../../../sdks/typescript/src/tokeniser/index.ts"

const corpus: Array<LabelledSentence> = readFileSync(
  new URL("../../../fixtures/pii-corpus/corpus.jsonl", import.meta.url),
  "utf8"
)
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as LabelledSentence)

describe("labelled PII corpus", () => {
  let result: CorpusScore
  beforeAll(async () => {
    const predictions = []
    for (const s of corpus) predictions.push(await detectSpans(s.text, createSession()))
    result = scoreCorpus(corpus, predictions)
  })

  it("has at least 300 sentences, over a quarter of them negatives, and labels that match their text", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300)
    expect(corpus.filter((s) => s.spans.length === 0).length).toBeGreaterThan(corpus.length / 4)
    for (const s of corpus) {
      for (const span of s.spans) {
        expect(span.end).toBeGreaterThan(span.start)
        expect((span as { value?: string }).value).toBe(s.text.slice(span.start, span.end))
      }
    }
  })

  it("finds structured identifiers with pooled precision >= 0.98 and recall >= 0.97 (exact spans)", () => {
    expect(result.structured.truePositives).toBeGreaterThan(200)
    expect(result.structured.precision).toBeGreaterThanOrEqual(0.98)
    expect(result.structured.recall).toBeGreaterThanOrEqual(0.97)
  })

  it("finds every structured type it labels and misses few of each", () => {
    const labelled = new Set(corpus.flatMap((s) => s.spans.map((span) => span.type)))
    for (const [type, s] of Object.entries(result.perType)) {
      if (type === "PERSON" || !labelled.has(type)) continue
      expect(s.truePositives, type).toBeGreaterThanOrEqual(7)
      expect(s.recall, type).toBeGreaterThanOrEqual(0.9)
    }
  })

  it("the built-in name model clears a low sanity bar (F1 is reported by npm run eval:pii)", () => {
    expect(result.perType.PERSON!.truePositives).toBeGreaterThan(0)
    expect(result.personOverlap.f1).toBeGreaterThanOrEqual(0.5)
  })
})
