import { describe, expect, it } from "vitest"
import { parseTopupAmount } from "../../../src/billing/topupAmount.ts"
import { secondsUntilNextMonth, startOfNextMonth, monthKey } from "../../../src/billing/month.ts"

describe("top-up amounts", () => {
  it.each([["10", 10_000_000n], ["10.5", 10_500_000n], ["5.00", 5_000_000n]])("accepts %s", (input, micros) => {
    expect(parseTopupAmount(input, 5_000_000n, 100_000_000n)).toEqual({ ok: true, micros })
  })
  it.each([["10.001"], ["4.99"], ["100.01"], ["1e2"], [""], [10]])("refuses %s", (input) => {
    expect(parseTopupAmount(input, 5_000_000n, 100_000_000n).ok).toBe(false)
  })
})

describe("quota months (UTC)", () => {
  it("names the month and finds the next month's start across a year end", () => {
    const at = new Date("2030-12-31T23:59:30Z")
    expect(monthKey(at)).toBe("2030-12")
    expect(startOfNextMonth(at).toISOString()).toBe("2031-01-01T00:00:00.000Z")
    expect(secondsUntilNextMonth(at)).toBe(30)
  })
})
