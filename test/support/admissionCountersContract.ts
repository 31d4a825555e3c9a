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

  const hold = (orgId: string, amountMicros: bigint) => ({ orgId, id: `hold_${fresh()}`, amountMicros, ttlMs: 60_000 })
  const seeded = (counters: AdmissionCounters["Service"], orgId: string, balanceMicros: bigint) =>
    Effect.gen(function*() {
      const probe = yield* counters.admit({ quota: undefined, windows: [], hold: hold(orgId, 1n) })
      expect(probe).toMatchObject({ _tag: "Counted", hold: "unknown" })
      if (probe._tag !== "Counted") throw new Error("unreachable")
      expect(yield* counters.seedBalance({ orgId, generation: probe.generation, balanceMicros, ttlMs: 60_000 })).toBe(true)
    })

  it("holds money only while the mirrored available balance is positive; finish returns the hold and debits what was billed", () =>
    withCounters(({ counters }) =>
      Effect.gen(function*() {
        const orgId = `org_${fresh()}`
        const windows = [{ key: `w:${orgId}`, windowMs: 60_000, limit: 100 }]
        yield* seeded(counters, orgId, 250n)
        const a = hold(orgId, 100n)
        const b = hold(orgId, 100n)
        const c = hold(orgId, 100n)
        expect(yield* counters.admit({ quota: undefined, windows, hold: a })).toMatchObject({ hold: "granted", windows: [{ count: 1 }] })
        expect(yield* counters.admit({ quota: undefined, windows, hold: b })).toMatchObject({ hold: "granted", windows: [{ count: 2 }] })
        // 50 available: the last call that may go below zero (by at most its own hold)
        expect(yield* counters.admit({ quota: undefined, windows, hold: c })).toMatchObject({ hold: "granted", windows: [{ count: 3 }] })
        // nothing available: refused, and the refusal counts in no window
        expect(yield* counters.admit({ quota: undefined, windows, hold: hold(orgId, 1n) })).toMatchObject({
          _tag: "Counted",
          hold: "insufficient",
          windows: [{ count: 3 }]
        })
        // a ends having cost 30: 250 - 30 = 220 mirrored, 200 held -> 20 available
        yield* counters.finish({ hold: { orgId, id: a.id, debitMicros: 30n } })
        // a hold given back twice (no debit the second time) is returned once
        yield* counters.finish({ hold: { orgId, id: a.id, debitMicros: 0n } })
        expect(yield* counters.admit({ quota: undefined, windows, hold: hold(orgId, 500n) })).toMatchObject({ hold: "granted" })
        expect(yield* counters.admit({ quota: undefined, windows, hold: hold(orgId, 1n) })).toMatchObject({ hold: "insufficient" })
      })))

  it("a mirror read that raced a debit is refused (the generation moved), so it cannot undo the debit", () =>
    withCounters(({ counters }) =>
      Effect.gen(function*() {
        const orgId = `org_${fresh()}`
        yield* seeded(counters, orgId, 100n)
        const first = yield* counters.admit({ quota: undefined, windows: [], hold: hold(orgId, 10n) })
        if (first._tag !== "Counted") throw new Error("unreachable")
        const stale = first.generation
        // a settlement elsewhere commits and reaches the mirror (generation moves)
        yield* counters.finish({ hold: { orgId, id: "other-call", debitMicros: 40n } })
        // a balance read from before that debit must not overwrite the mirror
        expect(yield* counters.seedBalance({ orgId, generation: stale, balanceMicros: 100n, ttlMs: 60_000 })).toBe(false)
        const now = yield* counters.admit({ quota: undefined, windows: [], hold: hold(orgId, 1n) })
        if (now._tag !== "Counted") throw new Error("unreachable")
        expect(now.generation).not.toBe(stale)
        expect(yield* counters.seedBalance({ orgId, generation: now.generation, balanceMicros: 60n, ttlMs: 60_000 })).toBe(true)
      })))

  it("the idempotency slot is taken with everything else or not at all, and a stored response marks it done", () =>
    withCounters(({ counters, quotas }) =>
      Effect.gen(function*() {
        const orgId = `org_${fresh()}`
        const windows = [{ key: `w:${orgId}`, windowMs: 60_000, limit: 100 }]
        const slot = { key: `idem:${orgId}|chat:${fresh()}`, owner: "first", ttlMs: 60_000 }
        yield* seeded(counters, orgId, 1_000n)
        // refused for its quota: the slot is not taken
        yield* quotas.add(orgId, "chat", "2030-05", 10)
        const quota = { orgId, capability: "chat", month: "2030-05", limit: 10 }
        expect(yield* counters.admit({ quota, windows, hold: hold(orgId, 1n), slot })).toMatchObject({ _tag: "QuotaExceeded" })
        const h = hold(orgId, 1n)
        expect(yield* counters.admit({ quota: undefined, windows, hold: h, slot })).toMatchObject({ _tag: "Counted", hold: "granted" })
        // a duplicate finds the slot taken and takes nothing (no window count, no hold)
        const dup = { ...slot, owner: "second" }
        expect(yield* counters.admit({ quota: undefined, windows, hold: hold(orgId, 1_000n), slot: dup })).toEqual({ _tag: "SlotTaken", done: false })
        // the original ends without storing a response (a failure): the slot is free for the retry
        yield* counters.finish({ hold: { orgId, id: h.id, debitMicros: 0n }, slot: { key: slot.key, owner: slot.owner, stored: false } })
        const retry = hold(orgId, 1n)
        expect(yield* counters.admit({ quota: undefined, windows, hold: retry, slot: dup })).toMatchObject({
          _tag: "Counted",
          hold: "granted",
          windows: [{ count: 2 }]
        })
        // another owner cannot release it; the owner's stored finish marks it done for later admissions
        yield* counters.finish({ slot: { key: slot.key, owner: "not-the-owner", stored: false } })
        expect(yield* counters.admit({ quota: undefined, windows, slot })).toEqual({ _tag: "SlotTaken", done: false })
        yield* counters.finish({ hold: { orgId, id: retry.id, debitMicros: 1n }, slot: { key: slot.key, owner: dup.owner, stored: true } })
        expect(yield* counters.admit({ quota: undefined, windows, slot: { ...slot, owner: "third" } })).toEqual({ _tag: "SlotTaken", done: true })
      })))

  it("a finish with `uncount` takes that admission out of every window it counted in, and only that one", () =>
    withCounters(({ counters }) =>
      Effect.gen(function*() {
        const orgId = `org_${fresh()}`
        const windows = [{ key: `k:${orgId}`, windowMs: 60_000, limit: 3 }, { key: `t:${orgId}`, windowMs: 3_600_000, limit: 100 }]
        const other = yield* counters.admit({ quota: undefined, windows })
        const given = yield* counters.admit({ quota: undefined, windows })
        expect(given).toMatchObject({ _tag: "Counted", windows: [{ count: 2 }, { count: 2 }] })
        if (given._tag !== "Counted" || other._tag !== "Counted") throw new Error("unreachable")
        yield* counters.finish({ uncount: given.entry })
        expect(yield* counters.admit({ quota: undefined, windows })).toMatchObject({ windows: [{ allowed: true, count: 2 }, { count: 2 }] })
        expect(yield* counters.admit({ quota: undefined, windows })).toMatchObject({ windows: [{ allowed: true, count: 3 }, { count: 3 }] })
        expect(yield* counters.admit({ quota: undefined, windows })).toMatchObject({ windows: [{ allowed: false, full: true, count: 3 }, { count: 3 }] })
      })))

  it("concurrent admissions against one wallet never hold more than the balance plus one call's hold", () =>
    withCounters(({ counters }) =>
      Effect.gen(function*() {
        const orgId = `org_${fresh()}`
        yield* seeded(counters, orgId, 1_000n)
        const results = yield* Effect.all(
          Array.from({ length: 40 }, () => counters.admit({ quota: undefined, windows: [], hold: hold(orgId, 70n) })),
          { concurrency: "unbounded" }
        )
        const granted = results.filter((r) => r._tag === "Counted" && r.hold === "granted").length
        // 1000 available: 14 holds leave 20 (> 0), the 15th takes it to -50; none after
        expect(granted).toBe(15)
      })))
}
