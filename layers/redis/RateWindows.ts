import { Effect, Layer } from "effect"
import { RateWindows } from "../../services/RateWindows.ts"
import { makeAdmit, windowKey } from "./admitScript.ts"
import { RedisClient } from "./RedisClient.ts"

/** Sliding windows in Redis sorted sets, checked and counted by the admission script (admitScript.ts) without a quota. */
export const RateWindowsRedis = Layer.effect(
  RateWindows,
  Effect.gen(function*() {
    const { redis, prefix } = yield* RedisClient
    const admit = makeAdmit(redis)
    const hitAll = (windows: ReadonlyArray<{ key: string; windowMs: number; limit: number }>) =>
      Effect.tryPromise(() => admit(undefined, windows.map((w) => ({ ...w, key: windowKey(prefix, w.key) })))).pipe(
        // Without a quota the script always counts the windows.
        Effect.map((count) => (count._tag === "Counted" ? count.windows : [])),
        Effect.orDie
      )
    return RateWindows.of({ hitAll, hit: (key, windowMs, limit) => Effect.map(hitAll([{ key, windowMs, limit }]), (v) => v[0]) })
  })
)
