import { describe, expect, it } from "vitest"
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent } from "../../../src/http/traceparent.ts"

describe("trace context ids", () => {
  it("new trace and span ids are lowercase hex of 16 and 8 bytes, never all zero, and do not repeat across pool refills", () => {
    // 4 KiB of pool per refill: 3,000 pairs (72 KB) cross many refills.
    const traces = new Set<string>()
    const spans = new Set<string>()
    for (let i = 0; i < 3000; i++) {
      const t = newTraceId()
      const s = newSpanId()
      expect(t).toMatch(/^[0-9a-f]{32}$/)
      expect(s).toMatch(/^[0-9a-f]{16}$/)
      expect(t).not.toMatch(/^0+$/)
      expect(s).not.toMatch(/^0+$/)
      traces.add(t)
      spans.add(s)
    }
    expect(traces.size).toBe(3000)
    expect(spans.size).toBe(3000)
  })

  it("a header that is absent or invalid starts a new trace; a valid one is continued with its flag", () => {
    const fresh = parseTraceparent(undefined)
    expect(fresh.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(fresh.parentSpanId).toBeUndefined()
    expect(fresh.sampledFlag).toBe(false)
    expect(parseTraceparent(`00-${"0".repeat(32)}-${"1".repeat(16)}-01`).parentSpanId).toBeUndefined()
    const header = formatTraceparent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true)
    expect(parseTraceparent(header)).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentSpanId: "00f067aa0ba902b7", sampledFlag: true })
  })
})
