import { Effect, Layer } from "effect"
import { quotaKey, Quotas } from "../../services/Quotas.ts"

/** In-process monthly counters: correct for ONE gateway process, and reset by a restart (set REDIS_URL). */
export const QuotasMemory = Layer.sync(Quotas, () => {
  const counters = new Map<string, number>()
  let currentMonth = ""
  return Quotas.of({
    used: (orgId, capability, month) => Effect.sync(() => counters.get(quotaKey(orgId, capability, month)) ?? 0),
    add: (orgId, capability, month, tokens) =>
      Effect.sync(() => {
        // A new month: earlier months' counters can never be read again.
        if (month !== currentMonth) {
          for (const key of counters.keys()) if (!key.endsWith(`:${month}`)) counters.delete(key)
          currentMonth = month
        }
        const key = quotaKey(orgId, capability, month)
        counters.set(key, (counters.get(key) ?? 0) + tokens)
      })
  })
})
