import { Effect, Layer } from "effect"
import { AdmissionCounters } from "../../services/AdmissionCounters.ts"
import { Quotas } from "../../services/Quotas.ts"
import { RateWindows } from "../../services/RateWindows.ts"

/**
 * In-process admission over the in-process Quotas and RateWindows (one gateway process only): the quota first,
 * and the windows only when it has room. Both steps are synchronous in memory, so no round trip is saved or lost.
 */
export const AdmissionCountersMemory = Layer.effect(
  AdmissionCounters,
  Effect.gen(function*() {
    const quotas = yield* Quotas
    const windows = yield* RateWindows
    return AdmissionCounters.of({
      admit: ({ quota, windows: specs }) =>
        Effect.gen(function*() {
          const used = quota === undefined ? 0 : yield* quotas.used(quota.orgId, quota.capability, quota.month)
          if (quota !== undefined && used >= quota.limit) return { _tag: "QuotaExceeded", used } as const
          return { _tag: "Counted", used, windows: yield* windows.hitAll(specs) } as const
        })
    })
  })
)
