import { Effect, Layer } from "effect"
import { Slots } from "../../services/Slots.ts"
import { RedisClient } from "./RedisClient.ts"
import { scriptCommand } from "./scriptCommand.ts"

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`
const RELEASE_COMMAND = "privacyRelaySlotRelease"
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`
const RENEW_COMMAND = "privacyRelaySlotRenew"

/** Slots as `SET key owner NX PX ttl`, released only by their owner, shared by every node. */
export const SlotsRedis = Layer.effect(
  Slots,
  Effect.gen(function*() {
    const { redis, prefix } = yield* RedisClient
    const k = (key: string) => `${prefix}slot:${key}`
    const releaseIfOwner = scriptCommand<(key: string, owner: string) => Promise<number>>(redis, RELEASE_COMMAND, RELEASE, 1)
    const renewIfOwner = scriptCommand<(key: string, owner: string, ttlMs: number) => Promise<number>>(redis, RENEW_COMMAND, RENEW, 1)
    return Slots.of({
      acquire: (key, owner, ttlMs) =>
        Effect.tryPromise(() => redis.set(k(key), owner, "PX", ttlMs, "NX")).pipe(Effect.map((r) => r === "OK"), Effect.orDie),
      renew: (key, owner, ttlMs) =>
        Effect.tryPromise(() => renewIfOwner(k(key), owner, ttlMs)).pipe(Effect.map((r) => r === 1), Effect.orDie),
      release: (key, owner) => Effect.tryPromise(() => releaseIfOwner(k(key), owner)).pipe(Effect.asVoid, Effect.orDie),
      holder: (key) => Effect.tryPromise(() => redis.get(k(key))).pipe(Effect.map((v) => v ?? undefined), Effect.orDie)
    })
  })
)
