import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  billCall,
  DEFAULT_HOLD_OUTPUT_TOKENS,
  estimateInputTokensFromBytes,
  MARKUP_BPS,
  MARKUP_PCT,
  maxCostHoldMicros,
  upstreamCostMicros,
  upstreamCostPicoUsd
} from "../../../src/billing/pricing.ts"
import { formatUsd } from "../../../src/billing/money.ts"

const localChat = { inputUsdPerMTok: "1.00", outputUsdPerMTok: "2.00" }
const localEmbed = { inputUsdPerMTok: "0.10", outputUsdPerMTok: "0" }

// Prices as the catalogue writes them: decimal strings with up to 6 decimals, up to $100/MTok.
const priceArb = fc.integer({ min: 0, max: 100_000_000 }).map((micros) => formatUsd(BigInt(micros)))
const tokensArb = fc.integer({ min: 0, max: 10_000_000 })
const keyModeArb = fc.constantFrom("pooled" as const, "byok" as const)

describe("markup rates", () => {
  it("are 15% pooled and 5% BYOK (spec Limits table)", () => {
    expect(MARKUP_BPS).toEqual({ pooled: 1500n, byok: 500n })
    expect(MARKUP_PCT).toEqual({ pooled: 15, byok: 5 })
  })
})

describe("billCall on known cases", () => {
  it("1000 input + 500 output tokens of local-chat cost $0.002 upstream, billed 2300 pooled and 2100 BYOK", () => {
    const usage = { ...localChat, inputTokens: 1000, outputTokens: 500 }
    expect(upstreamCostMicros(usage)).toBe(2000n)
    expect(billCall({ ...usage, keyMode: "pooled" })).toEqual({
      upstreamCostMicros: 2000n,
      billedMicros: 2300n,
      markupMicros: 300n,
      markupPct: 15,
      markupBps: 1500n
    })
    expect(billCall({ ...usage, keyMode: "byok" })).toEqual({
      upstreamCostMicros: 2000n,
      billedMicros: 2100n,
      markupMicros: 100n,
      markupPct: 5,
      markupBps: 500n
    })
  })

  it("rounds the billed amount up to the next micro-dollar", () => {
    // 1 input token of local-chat is exactly 1 micro upstream; 1.15 billed rounds up to 2.
    expect(billCall({ ...localChat, inputTokens: 1, outputTokens: 0, keyMode: "pooled" }).billedMicros).toBe(2n)
    // 7 input tokens: 7 micros upstream; x1.05 = 7.35 -> 8.
    expect(billCall({ ...localChat, inputTokens: 7, outputTokens: 0, keyMode: "byok" }).billedMicros).toBe(8n)
  })

  it("rounds a sub-micro upstream cost up, and bills from the exact cost rather than the rounded one", () => {
    // 1 token of local-embed = 0.1 micros exact: upstream rounds to 1; billed = ceil(0.115) = 1, not ceil(1 x 1.15) = 2.
    const tiny = billCall({ ...localEmbed, inputTokens: 1, outputTokens: 0, keyMode: "pooled" })
    expect(upstreamCostPicoUsd({ ...localEmbed, inputTokens: 1, outputTokens: 0 })).toBe(100_000n)
    expect(tiny.upstreamCostMicros).toBe(1n)
    expect(tiny.billedMicros).toBe(1n)
    expect(tiny.markupMicros).toBe(0n)
    // 1234 tokens of local-embed = 123.4 micros: upstream 124, pooled ceil(141.91) = 142, byok ceil(129.57) = 130.
    const embeddings = { ...localEmbed, inputTokens: 1234, outputTokens: 0 }
    expect(billCall({ ...embeddings, keyMode: "pooled" }).billedMicros).toBe(142n)
    expect(billCall({ ...embeddings, keyMode: "byok" }).billedMicros).toBe(130n)
    expect(upstreamCostMicros(embeddings)).toBe(124n)
  })

  it("charges nothing for a call with no tokens", () => {
    expect(billCall({ ...localChat, inputTokens: 0, outputTokens: 0, keyMode: "pooled" }).billedMicros).toBe(0n)
  })

  it("accepts bigint token counts", () => {
    expect(upstreamCostMicros({ ...localChat, inputTokens: 1000n, outputTokens: 500n })).toBe(2000n)
  })

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60])("rejects token count %s", (bad) => {
    expect(() => upstreamCostMicros({ ...localChat, inputTokens: bad, outputTokens: 0 })).toThrow(RangeError)
    expect(() => upstreamCostMicros({ ...localChat, inputTokens: 0, outputTokens: bad })).toThrow(RangeError)
  })

  it("rejects prices that are not exact non-negative decimals", () => {
    expect(() => upstreamCostMicros({ inputUsdPerMTok: "-1", outputUsdPerMTok: "0", inputTokens: 1, outputTokens: 0 })).toThrow()
    expect(() => upstreamCostMicros({ inputUsdPerMTok: "1e2", outputUsdPerMTok: "0", inputTokens: 1, outputTokens: 0 })).toThrow()
  })
})

describe("billCall properties", () => {
  const callArb = fc.record({
    inputUsdPerMTok: priceArb,
    outputUsdPerMTok: priceArb,
    inputTokens: tokensArb,
    outputTokens: tokensArb,
    keyMode: keyModeArb
  })

  it("never produces a negative amount", () => {
    fc.assert(
      fc.property(callArb, (call) => {
        const bill = billCall(call)
        return bill.upstreamCostMicros >= 0n && bill.billedMicros >= 0n && bill.markupMicros >= 0n
      })
    )
  })

  it("bills at least the upstream cost, and markup = billed - upstream", () => {
    fc.assert(
      fc.property(callArb, (call) => {
        const bill = billCall(call)
        return bill.billedMicros >= bill.upstreamCostMicros && bill.markupMicros === bill.billedMicros - bill.upstreamCostMicros
      })
    )
  })

  it("is the exact cost times (1 + markup), rounded up: never more than one micro above the exact value", () => {
    fc.assert(
      fc.property(callArb, (call) => {
        const exactTimesMarkup = upstreamCostPicoUsd(call) * (10_000n + MARKUP_BPS[call.keyMode]) // in 1e-16 USD
        const billedScaled = billCall(call).billedMicros * 1_000_000n * 10_000n
        return billedScaled >= exactTimesMarkup && billedScaled - exactTimesMarkup < 1_000_000n * 10_000n
      })
    )
  })

  it("is monotonic in input tokens and in output tokens", () => {
    fc.assert(
      fc.property(callArb, fc.nat({ max: 1_000_000 }), fc.nat({ max: 1_000_000 }), (call, moreIn, moreOut) => {
        const base = billCall(call)
        const bigger = billCall({ ...call, inputTokens: call.inputTokens + moreIn, outputTokens: call.outputTokens + moreOut })
        const moreInputOnly = billCall({ ...call, inputTokens: call.inputTokens + moreIn })
        const moreOutputOnly = billCall({ ...call, outputTokens: call.outputTokens + moreOut })
        return (
          bigger.billedMicros >= base.billedMicros &&
          moreInputOnly.billedMicros >= base.billedMicros &&
          moreOutputOnly.billedMicros >= base.billedMicros &&
          bigger.upstreamCostMicros >= base.upstreamCostMicros
        )
      })
    )
  })

  it("bills BYOK no more than pooled for the same usage", () => {
    fc.assert(
      fc.property(callArb, (call) => {
        return billCall({ ...call, keyMode: "byok" }).billedMicros <= billCall({ ...call, keyMode: "pooled" }).billedMicros
      })
    )
  })
})

describe("maxCostHoldMicros", () => {
  it("estimates input tokens as body bytes / 3 rounded up", () => {
    expect(estimateInputTokensFromBytes(0)).toBe(0n)
    expect(estimateInputTokensFromBytes(1)).toBe(1n)
    expect(estimateInputTokensFromBytes(3)).toBe(1n)
    expect(estimateInputTokensFromBytes(4)).toBe(2n)
    expect(estimateInputTokensFromBytes(3000)).toBe(1000n)
  })

  it("holds the billed price of the estimated input plus max_tokens output", () => {
    // 3000 bytes -> 1000 input tokens; 500 output tokens: same as the known 2300-micro pooled case.
    expect(maxCostHoldMicros({ ...localChat, bodyBytes: 3000, maxOutputTokens: 500, keyMode: "pooled" })).toBe(2300n)
    expect(maxCostHoldMicros({ ...localChat, bodyBytes: 3000, maxOutputTokens: 500, keyMode: "byok" })).toBe(2100n)
  })

  it("assumes 4096 output tokens when the request names no max_tokens", () => {
    expect(DEFAULT_HOLD_OUTPUT_TOKENS).toBe(4096)
    const held = maxCostHoldMicros({ ...localChat, bodyBytes: 0, keyMode: "pooled" })
    // 4096 x $2/MTok = 8192 micros; x1.15 = 9420.8 -> 9421.
    expect(held).toBe(9421n)
  })

  it("holds only input cost for embeddings (output cap 0)", () => {
    expect(maxCostHoldMicros({ ...localEmbed, bodyBytes: 3702, maxOutputTokens: 0, keyMode: "pooled" })).toBe(142n)
  })

  it("covers the billed amount of any call whose usage is within the estimate", () => {
    fc.assert(
      fc.property(priceArb, priceArb, fc.nat({ max: 1_000_000 }), fc.nat({ max: 100_000 }), keyModeArb, (inP, outP, bodyBytes, maxOut, keyMode) => {
        const prices = { inputUsdPerMTok: inP, outputUsdPerMTok: outP }
        const hold = maxCostHoldMicros({ ...prices, bodyBytes, maxOutputTokens: maxOut, keyMode })
        const actual = billCall({ ...prices, inputTokens: Math.floor(bodyBytes / 4), outputTokens: maxOut, keyMode })
        return hold >= actual.billedMicros
      })
    )
  })
})
