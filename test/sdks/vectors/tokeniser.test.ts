import { describe, expect, it } from "vitest"
import { createSession } from "../../../sdks/typescript/src/tokeniser/session.ts"
import { detectSpans } from "../../../sdks/typescript/src/tokeniser/tokeniseText.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const v = readVectors("tokeniser-spans.json")

describe("tokeniser-spans.json: the engine (names off) finds exactly the listed spans", () => {
  it("covers en, fr, de, es, nl and it", () => {
    expect(new Set(v.cases.map((c: { language: string }) => c.language))).toEqual(new Set(["en", "fr", "de", "es", "nl", "it"]))
    expect(v.cases.length).toBeGreaterThanOrEqual(12)
  })

  it.each(rows(v.cases, (c) => `${c.language}: ${c.text}`))("%s", async (_n, c: any) => {
    const spans = await detectSpans(c.text, createSession({ names: "off" }))
    expect(spans.map((s) => ({ start: s.start, end: s.end, type: s.type, value: c.text.slice(s.start, s.end) }))).toEqual(c.spans)
  })
})

const large = readVectors("tokeniser-large.json")

describe("tokeniser-large.json: a pathological long run does not overflow the regex stack, and the value after it is found", () => {
  it.each(rows(large.cases, (c) => c.name))("%s", async (_n, c: any) => {
    const text = c.unit.repeat(c.times) + c.tail
    const spans = await detectSpans(text, createSession({ names: "off" }))
    expect(spans.map((s) => ({ start: s.start, end: s.end, type: s.type, value: text.slice(s.start, s.end) }))).toEqual(c.spans)
  }, 120_000)
})
