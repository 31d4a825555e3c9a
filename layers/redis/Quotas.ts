import { Effect, Layer } from "effect"
import { quotaKey, Quotas } from "../../services/Quotas.ts"
import { RedisClient } from "./RedisClient.ts"
import { scriptCommand } from "./scriptCommand.ts"

/** Keys outlive their month by this much, then Redis drops them. */
const KEEP_AFTER_MONTH_S = 40 * 86_400

/** Month start (UTC) of a `YYYY-MM` key plus one month, in Unix seconds. */
const monthEndSeconds = (month: string) => {
  const [y, m] = month.split("-").map(Number)
  return Math.floor(Date.UTC(y, m, 1) / 1000)
}

/** INCRBY and EXPIREAT as one script: one command and one reply instead of MULTI, two commands and EXEC. */
const ADD = `redis.call('INCRBY', KEYS[1], ARGV[1]) redis.call('EXPIREAT', KEYS[1], ARGV[2]) return 1`
const ADD_COMMAND = "privacyRelayQuotaAdd"

type AddCommand = (key: string, tokens: number, expireAt: number) => Promise<unknown>

/**
 * Monthly counters in Redis, shared by every gateway node. Admission reads them through AdmissionCountersRedis (in
 * the same round trip as the rate windows); `used` is the plain read.
 */
export const QuotasRedis = Layer.effect(
  Quotas,
  Effect.gen(function*() {
    const { redis, prefix } = yield* RedisClient
    const add = scriptCommand<AddCommand>(redis, ADD_COMMAND, ADD, 1)
    return Quotas.of({
      used: (orgId, capability, month) =>
        Effect.tryPromise(() => redis.get(prefix + quotaKey(orgId, capability, month))).pipe(
          Effect.map((v) => (v === null ? 0 : Number(v))),
          Effect.orDie
        ),
      add: (orgId, capability, month, tokens) =>
        Effect.tryPromise(() => add(prefix + quotaKey(orgId, capability, month), tokens, monthEndSeconds(month) + KEEP_AFTER_MONTH_S)).pipe(
          Effect.asVoid,
          Effect.orDie
        )
    })
  })
)
