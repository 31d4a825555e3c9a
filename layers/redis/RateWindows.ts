import { Effect, Layer } from "effect"
import { RateWindows } from "../../services/RateWindows.ts"
import { makeAdmit } from "./admitScript.ts"
import { RedisClient } from "./RedisClient.ts"

/** Sliding windows in Redis sorted sets, checked and counted by the admission script (admitScript.ts) without a quota. */
export const RateWindowsRedis = Layer.effect(
  RateWindows,
  Effect.gen(function*() {
    const { redis, prefix } = yield* RedisClient
    const admit = makeAdmit(redis, prefix)
    const hitAll = (windows: ReadonlyArray<{ key: string; windowMs: number; limit: number }>) =>
      Effect.tryPromise(() => admit(windows)).pipe(
        // Without a quota or a slot the script always counts the windows.
        Effect.map((count) => (count._tag === "Counted" ? count.windows : [])),
        Effect.orDie
      )
    return RateWindows.of({ hitAll, hit: (key, windowMs, limit) => Effect.map(hitAll([{ key, windowMs, limit }]), (v) => v[0]) })
  })
)
