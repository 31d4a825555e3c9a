import { Effect, Layer } from "effect"
import { AdmissionCounters } from "../../services/AdmissionCounters.ts"
import { quotaKey } from "../../services/Quotas.ts"
import { makeAdmit, windowKey } from "./admitScript.ts"
import { RedisClient } from "./RedisClient.ts"

/**
 * A relay call's admission in ONE Redis round trip: the monthly quota counter (the key QuotasRedis adds to) and the
 * sliding windows (the keys RateWindowsRedis uses), in one script (admitScript.ts).
 */
export const AdmissionCountersRedis = Layer.effect(
  AdmissionCounters,
  Effect.gen(function*() {
    const { redis, prefix } = yield* RedisClient
    const admit = makeAdmit(redis)
    return AdmissionCounters.of({
      admit: ({ quota, windows }) =>
        Effect.tryPromise(() =>
          admit(
            quota === undefined ? undefined : { key: prefix + quotaKey(quota.orgId, quota.capability, quota.month), limit: quota.limit },
            windows.map((w) => ({ ...w, key: windowKey(prefix, w.key) }))
          )
        ).pipe(Effect.orDie)
    })
  })
)
