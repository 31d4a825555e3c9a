import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { formatUsd, InvalidUsdAmount, microsToUsdString, parseUsd, tryParseUsd } from "../../../src/billing/money.ts"

describe("parseUsd", () => {
  it("parses decimal USD strings exactly into micros", () => {
    expect(parseUsd("1.25")).toBe(1_250_000n)
    expect(parseUsd("0")).toBe(0n)
    expect(parseUsd("2")).toBe(2_000_000n)
    expect(parseUsd("0.000001")).toBe(1n)
    expect(parseUsd("0.008")).toBe(8_000n)
    expect(parseUsd("15.00")).toBe(15_000_000n)
    expect(parseUsd("123456789012345678.999999")).toBe(123456789012345678999999n)
  })

  it("accepts zeros beyond the sixth decimal because they are still exact", () => {
    expect(parseUsd("1.2500000000")).toBe(1_250_000n)
  })

  it.each(["-1", "-0.5", "", " 1", "1 ", "1e3", "1.", ".5", "+1", "1,000", "abc", "0x10", "1.2.3", "NaN", "Infinity"])(
    "rejects %j",
    (input) => {
      expect(() => parseUsd(input)).toThrow(InvalidUsdAmount)
      expect(tryParseUsd(input)).toBeUndefined()
    }
  )

  it("rejects amounts finer than one micro-dollar instead of rounding them", () => {
    expect(() => parseUsd("0.0000001")).toThrow(/micro-dollar/)
    expect(() => parseUsd("1.0000005")).toThrow(InvalidUsdAmount)
  })
})

describe("formatUsd", () => {
  it("formats micros with exactly six decimals", () => {
    expect(formatUsd(1_250_000n)).toBe("1.250000")
    expect(formatUsd(0n)).toBe("0.000000")
    expect(formatUsd(1n)).toBe("0.000001")
    expect(formatUsd(2_000_000n)).toBe("2.000000")
  })

  it("formats negative amounts with a leading minus sign", () => {
    expect(formatUsd(-1n)).toBe("-0.000001")
    expect(formatUsd(-1_250_000n)).toBe("-1.250000")
  })

  it("microsToUsdString is the response-field formatter and agrees with formatUsd", () => {
    expect(microsToUsdString(2_300n)).toBe("0.002300")
  })

  it("round-trips: parseUsd(formatUsd(m)) === m for every non-negative amount", () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 24n }), (micros) => parseUsd(formatUsd(micros)) === micros))
  })

  it("round-trips negatives through the magnitude", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 24n), max: -1n }), (micros) => {
        const text = formatUsd(micros)
        return text.startsWith("-") && -parseUsd(text.slice(1)) === micros
      })
    )
  })

  it("round-trips decimal strings with up to six decimals to their canonical six-decimal form", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 0, max: 999_999 }), (whole, fraction) => {
        const canonical = `${whole}.${String(fraction).padStart(6, "0")}`
        return formatUsd(parseUsd(canonical)) === canonical
      })
    )
  })
})
