import { Effect, Layer } from "effect"
import { quotaKey, Quotas } from "../../services/Quotas.ts"
import { RedisClient } from "./RedisClient.ts"

/** Keys outlive their month by this much, then Redis drops them. */
const KEEP_AFTER_MONTH_S = 40 * 86_400

/** Month start (UTC) of a `YYYY-MM` key plus one month, in Unix seconds. */
const monthEndSeconds = (month: string) => {
  const [y, m] = month.split("-").map(Number)
  return Math.floor(Date.UTC(y, m, 1) / 1000)
}

/** Monthly counters in Redis: INCRBY and EXPIREAT in one MULTI, shared by every gateway node. */
export const QuotasRedis = Layer.effect(
  Quotas,
  Effect.gen(function*() {
    const { redis, prefix } = yield* RedisClient
    return Quotas.of({
      used: (orgId, capability, month) =>
        Effect.tryPromise(() => redis.get(prefix + quotaKey(orgId, capability, month))).pipe(
          Effect.map((v) => (v === null ? 0 : Number(v))),
          Effect.orDie
        ),
      add: (orgId, capability, month, tokens) =>
        Effect.tryPromise(() =>
          redis.multi()
            .incrby(prefix + quotaKey(orgId, capability, month), tokens)
            .expireat(prefix + quotaKey(orgId, capability, month), monthEndSeconds(month) + KEEP_AFTER_MONTH_S)
            .exec()
        ).pipe(Effect.asVoid, Effect.orDie)
    })
  })
)
