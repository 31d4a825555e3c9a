import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { billCall } from "../../../src/billing/pricing.ts"
import { decideRoute, estimatedBilledMicros, ROUTING_CLASSIFIER, type RoutingCandidate } from "../../../src/routing/costRouter.ts"

const candidate = (provider: string, input: string, output: string, extra: Partial<RoutingCandidate> = {}): RoutingCandidate => ({
  provider,
  inputUsdPerMTok: input,
  outputUsdPerMTok: output,
  keyMode: "pooled",
  available: true,
  ...extra
})

const local = candidate("local", "1.00", "2.00")
const economy = candidate("local-economy", "0.50", "1.00")

describe("decideRoute (strategy cost)", () => {
  it("moves the call to the cheaper provider of the same model and reports the estimated savings", () => {
    const { chosen, decision } = decideRoute({
      strategy: "cost", model: "local-chat", current: local, candidates: [local, economy], bodyBytes: 4000, maxOutputTokens: 1000
    })
    expect(chosen.provider).toBe("local-economy")
    // Half the list price on both token kinds, same markup: half the billed estimate.
    const before = billCall({ inputTokens: 1000, outputTokens: 1000, ...local, keyMode: "pooled" }).billedMicros
    const after = billCall({ inputTokens: 1000, outputTokens: 1000, ...economy, keyMode: "pooled" }).billedMicros
    expect(decision).toEqual({
      from: "local",
      to: "local-economy",
      chosen_model: "local-chat",
      classifier: ROUTING_CLASSIFIER,
      savings_pct: Math.floor(Number((before - after) * 10_000n / before)) / 100,
      strategy: "cost"
    })
    expect(decision.savings_pct).toBe(50)
  })

  it("keeps the current provider when no alternative is cheaper (savings 0, from = to)", () => {
    const pricier = candidate("pricey", "3.00", "6.00")
    const { chosen, decision } = decideRoute({
      strategy: "cost", model: "m", current: local, candidates: [local, pricier], bodyBytes: 100, maxOutputTokens: 10
    })
    expect(chosen).toBe(local)
    expect(decision).toMatchObject({ from: "local", to: "local", savings_pct: 0 })
  })

  it("keeps the current provider on an exact tie", () => {
    const twin = candidate("twin", "1.00", "2.00")
    expect(decideRoute({ strategy: "cost", model: "m", current: local, candidates: [twin, local], bodyBytes: 100, maxOutputTokens: 10 }).chosen).toBe(local)
  })

  it("never chooses an unavailable provider, however cheap", () => {
    const { chosen } = decideRoute({
      strategy: "cost",
      model: "local-chat",
      current: local,
      candidates: [local, { ...economy, available: false }],
      bodyBytes: 4000,
      maxOutputTokens: 100
    })
    expect(chosen.provider).toBe("local")
  })

  it("counts the key mode: a BYOK provider (5%) beats a pooled one (15%) at the same list price", () => {
    const byokTwin = candidate("twin", "1.00", "2.00", { keyMode: "byok" })
    const { chosen, decision } = decideRoute({
      strategy: "cost", model: "m", current: local, candidates: [local, byokTwin], bodyBytes: 4000, maxOutputTokens: 1000
    })
    expect(chosen.provider).toBe("twin")
    expect(decision.savings_pct).toBeGreaterThan(8)
    expect(decision.savings_pct).toBeLessThan(9) // 1.05 / 1.15 = 0.913...
  })

  it("weighs input and output by the request's size and max_tokens (metadata only)", () => {
    // cheap input, dear output vs the reverse: a large prompt with few output tokens favours cheap input.
    const cheapIn = candidate("cheap-in", "0.10", "10.00")
    const cheapOut = candidate("cheap-out", "10.00", "0.10")
    const bigPrompt = decideRoute({ strategy: "cost", model: "m", current: cheapOut, candidates: [cheapIn, cheapOut], bodyBytes: 400_000, maxOutputTokens: 10 })
    expect(bigPrompt.chosen.provider).toBe("cheap-in")
    const bigAnswer = decideRoute({ strategy: "cost", model: "m", current: cheapIn, candidates: [cheapIn, cheapOut], bodyBytes: 40, maxOutputTokens: 100_000 })
    expect(bigAnswer.chosen.provider).toBe("cheap-out")
  })

  const price = fc.integer({ min: 1, max: 100_000 }).map((n) => (n / 1000).toFixed(3))
  const arbCandidate = (i: number) =>
    fc.record({
      input: price,
      output: price,
      byok: fc.boolean(),
      available: fc.boolean()
    }).map((r) => candidate(`p${i}`, r.input, r.output, { keyMode: r.byok ? "byok" : "pooled", available: r.available }))

  it("property: never picks a more expensive or an unavailable provider, and savings are in [0, 100)", () => {
    fc.assert(fc.property(
      fc.tuple(arbCandidate(0), arbCandidate(1), arbCandidate(2), arbCandidate(3)),
      fc.integer({ min: 1, max: 2_000_000 }),
      fc.option(fc.integer({ min: 0, max: 200_000 }), { nil: undefined }),
      (cands, bodyBytes, maxOutputTokens) => {
        const current = { ...cands[0], available: true }
        const all = [current, ...cands.slice(1)]
        const { chosen, decision } = decideRoute({ strategy: "cost", model: "m", current, candidates: all, bodyBytes, maxOutputTokens })
        const p = (c: RoutingCandidate) => estimatedBilledMicros(c, bodyBytes, maxOutputTokens)
        expect(chosen.available).toBe(true)
        expect(p(chosen) <= p(current)).toBe(true)
        // and it is the cheapest available one
        for (const c of all) if (c.available) expect(p(chosen) <= p(c)).toBe(true)
        expect(decision.to).toBe(chosen.provider)
        expect(decision.savings_pct).toBeGreaterThanOrEqual(0)
        expect(decision.savings_pct).toBeLessThan(100)
        if (chosen.provider === current.provider) expect(decision.savings_pct).toBe(0)
      }
    ))
  })
})
