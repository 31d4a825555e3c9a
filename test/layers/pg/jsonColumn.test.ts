import { describe, expect, it } from "vitest"
import { jsonColumn } from "../../../layers/pg/jsonColumn.ts"

describe("jsonColumn", () => {
  it("takes a jsonb value the driver already parsed as it is", () => {
    const parsed = { ok: true, heads: [{ chain_id: "c", last_seq: 1 }] }
    expect(jsonColumn(parsed)).toBe(parsed)
    expect(jsonColumn(null)).toBeNull()
  })

  it("parses a value that arrived as JSON text", () => {
    expect(jsonColumn<{ ok: boolean }>('{"ok":false,"granted":["h1"]}')).toEqual({ ok: false, granted: ["h1"] })
    expect(() => jsonColumn("not json")).toThrow(SyntaxError)
  })
})
