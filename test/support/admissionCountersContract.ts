import { Effect, Layer, ManagedRuntime } from "effect"
import { expect, it } from "vitest"
import { AdmissionCounters } from "../../services/AdmissionCounters.ts"
import { Quotas } from "../../services/Quotas.ts"

const fresh = () => crypto.randomUUID().slice(0, 8)

/**
 * What every AdmissionCounters implementation must do, run against a layer that provides it together with the
 * Quotas it reads (the same counters Settlement adds to).
 */
export const admissionCountersContract = (makeLayer: () => Layer.Layer<AdmissionCounters | Quotas>) => {
  const withCounters = async <A>(use: (services: { counters: AdmissionCounters["Service"]; quotas: Quotas["Service"] }) => Effect.Effect<A>) => {
    const runtime = ManagedRuntime.make(makeLayer())
    try {
      return await runtime.runPromise(
        Effect.gen(function*() {
          return yield* use({ counters: yield* AdmissionCounters, quotas: yield* Quotas })
        })
      )
    } finally {
      await runtime.dispose()
    }
  }

  it("without a quota counts the windows, and the call over a limit is refused with when to retry", () =>
    withCounters(({ counters }) =>
      Effect.gen(function*() {
        const windows = [{ key: `w:${fresh()}`, windowMs: 60_000, limit: 2 }]
        const first = yield* counters.admit({ quota: undefined, windows })
        const second = yield* counters.admit({ quota: undefined, windows })
        const third = yield* counters.admit({ quota: undefined, windows })
        for (const r of [first, second]) expect(r).toMatchObject({ _tag: "Counted", windows: [{ allowed: true, full: false }] })
        expect(first).toMatchObject({ windows: [{ count: 1, limit: 2 }] })
        expect(second).toMatchObject({ windows: [{ count: 2 }] })
        expect(third).toMatchObject({ _tag: "Counted", windows: [{ allowed: false, full: true, count: 2 }] })
        if (third._tag !== "Counted") throw new Error("unreachable")
        expect(third.windows[0].retryAfterMs).toBeGreaterThan(0)
        expect(third.windows[0].retryAfterMs).toBeLessThanOrEqual(60_000)
      })))

  it("a call refused by one window counts in none", () =>
    withCounters(({ counters }) =>
      Effect.gen(function*() {
        const tight = { key: `tight:${fresh()}`, windowMs: 60_000, limit: 1 }
        const loose = { key: `loose:${fresh()}`, windowMs: 60_000, limit: 5 }
        yield* counters.admit({ quota: undefined, windows: [tight, loose] })
        const refused = yield* counters.admit({ quota: undefined, windows: [tight, loose] })
        expect(refused).toMatchObject({
          _tag: "Counted",
          windows: [{ allowed: false, full: true, count: 1 }, { allowed: false, full: false, count: 1, retryAfterMs: 0 }]
        })
      })))

  it("a used-up monthly quota refuses before any window, so the refusal takes no slot", () =>
    withCounters(({ counters, quotas }) =>
      Effect.gen(function*() {
        const orgId = `org_${fresh()}`
        const month = "2030-01"
        const windows = [{ key: `w:${orgId}`, windowMs: 60_000, limit: 10 }]
        const withRoom = yield* counters.admit({ quota: { orgId, capability: "chat", month, limit: 5 }, windows })
        expect(withRoom).toMatchObject({ _tag: "Counted", used: 0, windows: [{ allowed: true, count: 1 }] })

        yield* quotas.add(orgId, "chat", month, 5)
        const refused = yield* counters.admit({ quota: { orgId, capability: "chat", month, limit: 5 }, windows })
        expect(refused).toEqual({ _tag: "QuotaExceeded", used: 5 })
        // Another capability and another month are separate counters.
        const otherCapability = yield* counters.admit({ quota: { orgId, capability: "embeddings", month, limit: 5 }, windows })
        expect(otherCapability).toMatchObject({ _tag: "Counted", used: 0, windows: [{ count: 2 }] })
        const otherMonth = yield* counters.admit({ quota: { orgId, capability: "chat", month: "2030-02", limit: 5 }, windows })
        expect(otherMonth).toMatchObject({ _tag: "Counted", used: 0, windows: [{ count: 3 }] })
        // A raised limit admits again, and the refused call above took no slot (3 before it, 4 now).
        const raised = yield* counters.admit({ quota: { orgId, capability: "chat", month, limit: 6 }, windows })
        expect(raised).toMatchObject({ _tag: "Counted", used: 5, windows: [{ allowed: true, count: 4 }] })
      })))
}
