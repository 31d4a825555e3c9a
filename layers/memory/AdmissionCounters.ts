import { Clock, Effect, Layer, Semaphore } from "effect"
import { AdmissionCounters, DONE_MARK_TTL_MS } from "../../services/AdmissionCounters.ts"
import { Quotas } from "../../services/Quotas.ts"
import { Slots } from "../../services/Slots.ts"
import { makeWindowLogs } from "./RateWindows.ts"

interface Wallet {
  /** The mirrored balance and when it must be re-read; undefined: not loaded. */
  balance: bigint | undefined
  balanceUntil: number
  held: bigint
  readonly holds: Map<string, { readonly amount: bigint; readonly expiresAt: number }>
  generation: number
}

/**
 * In-process admission over the in-process Quotas and Slots and its own window logs (one gateway process only), with
 * the same meaning as the Redis script (admitScript.ts): slot, quota, windows, then the hold against the balance mirror.
 * Every step is synchronous in memory, so the whole admission is atomic without a lock.
 */
export const AdmissionCountersMemory = Layer.effect(
  AdmissionCounters,
  Effect.gen(function*() {
    const quotas = yield* Quotas
    const windows = makeWindowLogs()
    const slots = yield* Slots
    const wallets = new Map<string, Wallet>()
    const done = new Map<string, number>()
    // The steps below are synchronous, but a fiber may still be descheduled between effects: one at a time.
    const lock = Semaphore.makeUnsafe(1)

    const walletOf = (orgId: string): Wallet => {
      let w = wallets.get(orgId)
      if (w === undefined) {
        w = { balance: undefined, balanceUntil: 0, held: 0n, holds: new Map(), generation: 0 }
        wallets.set(orgId, w)
      }
      return w
    }
    const sweep = (w: Wallet, now: number) => {
      for (const [id, h] of w.holds) {
        if (h.expiresAt > now) continue
        w.held -= h.amount
        w.holds.delete(id)
      }
    }
    const isDone = (key: string, now: number) => {
      const until = done.get(key)
      if (until === undefined) return false
      if (until > now) return true
      done.delete(key)
      return false
    }

    return AdmissionCounters.of({
      admit: ({ quota, windows: specs, hold, slot }) =>
        lock.withPermits(1)(Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (slot !== undefined) {
            if (isDone(slot.key, now)) return { _tag: "SlotTaken", done: true } as const
            if ((yield* slots.holder(slot.key)) !== undefined) return { _tag: "SlotTaken", done: false } as const
          }
          const used = quota === undefined ? 0 : yield* quotas.used(quota.orgId, quota.capability, quota.month)
          if (quota !== undefined && used >= quota.limit) return { _tag: "QuotaExceeded", used } as const
          const checked = windows.hitAllAt(specs, now, false)
          let verdict: "granted" | "insufficient" | "unknown" = "granted"
          let generation = "0"
          if (hold !== undefined && checked.every((v) => v.allowed)) {
            const w = walletOf(hold.orgId)
            sweep(w, now)
            generation = String(w.generation)
            if (w.balance === undefined || w.balanceUntil <= now) {
              w.balance = undefined
              verdict = "unknown"
            } else if (w.balance - w.held <= 0n) verdict = "insufficient"
          }
          // The windows are counted only when everything admits the call (nothing yielded since the check).
          const take = verdict === "granted" && checked.every((v) => v.allowed)
          const counted = take ? windows.hitAllAt(specs, now, true) : checked
          if (take) {
            if (hold !== undefined) {
              const w = walletOf(hold.orgId)
              w.holds.set(hold.id, { amount: hold.amountMicros, expiresAt: now + hold.ttlMs })
              w.held += hold.amountMicros
            }
            if (slot !== undefined) yield* slots.acquire(slot.key, slot.owner, slot.ttlMs)
          }
          return { _tag: "Counted", used, windows: counted, hold: verdict, generation, entry: { keys: specs.map((w) => w.key), id: String(now) } } as const
        })),
      openHolds: Effect.map(Clock.currentTimeMillis, (now) => {
        let open = 0
        for (const w of wallets.values()) for (const h of w.holds.values()) if (h.expiresAt > now) open++
        return open
      }),
      seedBalance: ({ orgId, generation, balanceMicros, ttlMs }) =>
        lock.withPermits(1)(Effect.map(Clock.currentTimeMillis, (now) => {
          const w = walletOf(orgId)
          if (String(w.generation) !== generation) return false
          w.balance = balanceMicros
          w.balanceUntil = now + ttlMs
          return true
        })),
      finish: ({ hold, quota, slot, uncount }) =>
        lock.withPermits(1)(Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (uncount !== undefined) windows.forget(uncount.keys, Number(uncount.id))
          if (hold !== undefined) {
            const w = walletOf(hold.orgId)
            const h = w.holds.get(hold.id)
            if (h !== undefined) {
              w.held -= h.amount
              w.holds.delete(hold.id)
            }
            if (hold.debitMicros !== 0n) {
              if (w.balance !== undefined) w.balance -= hold.debitMicros
              w.generation++
            }
          }
          if (quota !== undefined && quota.tokens > 0) yield* quotas.add(quota.orgId, quota.capability, quota.month, quota.tokens)
          if (slot !== undefined) {
            yield* slots.release(slot.key, slot.owner)
            if (slot.stored) {
              // Every mark lives DONE_MARK_TTL_MS and is (re)inserted at the end, so the map is in expiry order: the
              // expired ones are at its front. Bounded by the calls of the last DONE_MARK_TTL_MS, swept as it goes.
              for (const [k, until] of done) {
                if (until > now) break
                done.delete(k)
              }
              done.delete(slot.key)
              done.set(slot.key, now + DONE_MARK_TTL_MS)
            }
          }
        }))
    })
  })
)
