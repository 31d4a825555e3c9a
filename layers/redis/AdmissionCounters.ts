import { Effect, Layer } from "effect"
import { AdmissionCounters } from "../../services/AdmissionCounters.ts"
import { quotaKey } from "../../services/Quotas.ts"
import { makeAdmission } from "./admitScript.ts"
import { RedisClient } from "./RedisClient.ts"

/**
 * A relay call's admission in ONE Redis round trip: the idempotency slot (the key SlotsRedis uses), the monthly quota
 * counter (the key QuotasRedis adds to), the sliding windows (the keys RateWindowsRedis uses) and the wallet hold, in
 * one script (admitScript.ts); its end (hold, debit, tokens, slot) in one more, after the settlement.
 */
export const AdmissionCountersRedis = Layer.effect(
  AdmissionCounters,
  Effect.gen(function*() {
    const { redis, prefix } = yield* RedisClient
    const scripts = makeAdmission(redis, prefix)
    // Built once: `Effect.withSpan(name)` captures a stack trace (an Error) each time it is called, ~11 us per call
    // measured in-process; the span itself is still one per admission.
    const admitSpan = Effect.withSpan("redis.admit")
    return AdmissionCounters.of({
      admit: ({ quota, windows, hold, slot }) =>
        Effect.tryPromise(() =>
          scripts.admit({
            quota: quota === undefined ? undefined : { key: quotaKey(quota.orgId, quota.capability, quota.month), limit: quota.limit },
            windows,
            hold,
            slot
          })
        ).pipe(Effect.orDie, admitSpan),
      openHolds: Effect.tryPromise(() => scripts.openHolds()).pipe(Effect.orDie),
      seedBalance: (input) => Effect.tryPromise(() => scripts.seed(input)).pipe(Effect.orDie),
      // The command is queued on the connection at once (ioredis keeps its order), so a call this process starts
      // after answering sees the release, the debit and the tokens; the caller need not wait for the reply. The
      // socket is corked until the current turn's synchronous work is done: the call's answer, written in the same
      // turn, goes out first, and the finishes of every call that ends in this turn share one write.
      finish: (input) =>
        Effect.sync(() => {
          const socket = redis.status === "ready" ? redis.stream : undefined
          if (socket !== undefined) {
            socket.cork()
            process.nextTick(() => socket.uncork())
          }
          scripts.finish({
            ...input,
            quotaKey: input.quota === undefined ? undefined : quotaKey(input.quota.orgId, input.quota.capability, input.quota.month)
          }).catch(() => {
            // A lost finish leaves the hold to expire and the mirror to be re-read (it lags on the safe side).
          })
        })
    })
  })
)
