import { describe, expect, it } from "vitest"
import { ConfigInvalid } from "../../../src/config/gatewayConfig.ts"
import { nextPeriodStart, parseRotationSchedule, periodName, periodStartOf } from "../../../src/receipts/rotationSchedule.ts"

const at = (iso: string) => Date.parse(iso)
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString())

describe("RECEIPT_KEY_ROTATION", () => {
  it("defaults to calendar quarters (UTC), named 2025-Q2", () => {
    for (const raw of [undefined, "", "  ", "quarterly", "QUARTERLY"]) expect(parseRotationSchedule(raw).name).toBe("quarterly")
    const q = parseRotationSchedule(undefined)
    expect(iso(periodStartOf(q, at("2025-05-17T13:00:00Z")))).toBe("2025-04-01T00:00:00.000Z")
    expect(iso(nextPeriodStart(q, at("2025-05-17T13:00:00Z")))).toBe("2025-07-01T00:00:00.000Z")
    expect(iso(periodStartOf(q, at("2025-03-31T23:59:59.999Z")))).toBe("2025-01-01T00:00:00.000Z")
    expect(iso(periodStartOf(q, at("2025-04-01T00:00:00.000Z")))).toBe("2025-04-01T00:00:00.000Z")
    expect(iso(nextPeriodStart(q, at("2025-11-02T00:00:00Z")))).toBe("2026-01-01T00:00:00.000Z")
    expect(periodName(q, at("2025-04-01T00:00:00Z"))).toBe("2025-Q2")
    expect(periodName(q, at("2025-10-01T00:00:00Z"))).toBe("2025-Q4")
  })

  it("monthly and yearly follow the calendar too", () => {
    const m = parseRotationSchedule("monthly")
    expect(iso(periodStartOf(m, at("2024-02-29T12:00:00Z")))).toBe("2024-02-01T00:00:00.000Z")
    expect(iso(nextPeriodStart(m, at("2024-12-31T23:59:59Z")))).toBe("2025-01-01T00:00:00.000Z")
    expect(periodName(m, at("2024-02-01T00:00:00Z"))).toBe("2024-02")
    const y = parseRotationSchedule("yearly")
    expect(iso(nextPeriodStart(y, at("2024-06-01T00:00:00Z")))).toBe("2025-01-01T00:00:00.000Z")
    expect(periodName(y, at("2025-01-01T00:00:00Z"))).toBe("2025")
  })

  it("a fixed period counts from the Unix epoch (compressed schedules: 2s)", () => {
    const two = parseRotationSchedule("2s")
    expect(two).toEqual({ kind: "fixed", name: "2s", periodMs: 2000 })
    expect(periodStartOf(two, 12_345)).toBe(12_000)
    expect(nextPeriodStart(two, 12_345)).toBe(14_000)
    expect(nextPeriodStart(two, 14_000)).toBe(16_000)
    expect(periodName(two, 14_000)).toBe("1970-01-01T00:00:14.000Z")
    expect(parseRotationSchedule("90d")).toMatchObject({ periodMs: 90 * 86_400_000 })
    expect(parseRotationSchedule("1500ms")).toMatchObject({ periodMs: 1500 })
    expect(parseRotationSchedule("12h")).toMatchObject({ periodMs: 12 * 3_600_000 })
    expect(parseRotationSchedule("5m")).toMatchObject({ periodMs: 300_000 })
  })

  it("off has no periods", () => {
    const off = parseRotationSchedule("off")
    expect(periodStartOf(off, Date.now())).toBeUndefined()
    expect(nextPeriodStart(off, Date.now())).toBeUndefined()
  })

  it("refuses anything else, naming the variable (the gateway then does not start: invalid_setting)", () => {
    for (const raw of ["fortnightly", "0s", "999ms", "-5d", "1.5d", "2 s", "2w", "s", "1e3s", "9999999999999d"]) {
      expect(() => parseRotationSchedule(raw), raw).toThrow(ConfigInvalid)
      expect(() => parseRotationSchedule(raw), raw).toThrow(/^RECEIPT_KEY_ROTATION must be quarterly, monthly, yearly, off, or a period of at least 1s/)
    }
  })
})
