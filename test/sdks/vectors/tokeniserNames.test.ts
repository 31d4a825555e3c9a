import { describe, expect, it } from "vitest"
import { builtinNameModel } from "../../../sdks/typescript/src/tokeniser/builtinNameModel.ts"
import { createSession } from "../../../sdks/typescript/src/tokeniser/session.ts"
import { detectSpans } from "../../../sdks/typescript/src/tokeniser/tokeniseText.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const v = readVectors("tokeniser-names.json")

describe("tokeniser-names.json: the engine with the built-in name model finds exactly the listed spans", () => {
  it("covers en, fr, de, es and nl, names found and person-like words left alone", () => {
    expect(v.engine_settings.names).toBe("builtin")
    expect(new Set(v.cases.map((c: { language: string }) => c.language))).toEqual(new Set(["en", "fr", "de", "es", "nl"]))
    const people = v.cases.flatMap((c: { spans: Array<{ type: string }> }) => c.spans.filter((s) => s.type === "PERSON"))
    expect(people.length).toBeGreaterThanOrEqual(30)
    expect(v.cases.filter((c: { spans: Array<unknown> }) => c.spans.length === 0).length).toBeGreaterThanOrEqual(5)
  })

  it.each(rows(v.cases, (c) => `${c.language}: ${c.text}`))("%s", async (_n, c: any) => {
    const spans = await detectSpans(c.text, createSession({ names: builtinNameModel }))
    expect(spans.map((s) => ({ start: s.start, end: s.end, type: s.type, value: c.text.slice(s.start, s.end) }))).toEqual(c.spans)
  })
})
