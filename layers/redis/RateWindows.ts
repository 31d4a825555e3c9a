import { Effect, Layer } from "effect"
import { RateWindows, type WindowVerdict } from "../../services/RateWindows.ts"
import { RedisClient } from "./RedisClient.ts"

/**
 * Sliding windows in Redis sorted sets (score = time in ms), checked and counted in one Lua script so that
 * concurrent hits on several nodes can never overshoot a limit. The server clock (TIME) is the only clock,
 * so nodes with skewed clocks still agree.
 *
 * KEYS: one per window. ARGV: member, then (windowMs, limit) per key.
 * Returns per key: count, retryAfterMs, resetMs; followed by allowed (1/0).
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS
local counts = {}
local allowed = 1
for i = 1, n do
  local win = tonumber(ARGV[2 * i])
  local limit = tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - win)
  local c = redis.call('ZCARD', KEYS[i])
  counts[i] = c
  if c >= limit then allowed = 0 end
end
local out = {}
for i = 1, n do
  local win = tonumber(ARGV[2 * i])
  if allowed == 1 then
    redis.call('ZADD', KEYS[i], now, ARGV[1] .. ':' .. i)
    redis.call('PEXPIRE', KEYS[i], win)
    counts[i] = counts[i] + 1
  end
  local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
  local o = now
  if oldest[2] then o = tonumber(oldest[2]) end
  out[3 * i - 2] = counts[i]
  out[3 * i - 1] = math.max(1, o + win - now)
  out[3 * i] = math.max(0, o + win - now)
end
out[3 * n + 1] = allowed
return out
`

export const RateWindowsRedis = Layer.effect(
  RateWindows,
  Effect.gen(function*() {
    const { redis, prefix } = yield* RedisClient
    const hitAll = (windows: ReadonlyArray<{ key: string; windowMs: number; limit: number }>) =>
      Effect.tryPromise(() =>
        redis.eval(
          SCRIPT,
          windows.length,
          ...windows.map((w) => `${prefix}rw:${w.key}`),
          crypto.randomUUID(),
          ...windows.flatMap((w) => [w.windowMs, w.limit])
        ) as Promise<Array<number>>
      ).pipe(
        Effect.map((out): ReadonlyArray<WindowVerdict> => {
          const allowed = out[3 * windows.length] === 1
          return windows.map((w, i) => {
            const full = !allowed && out[3 * i] >= w.limit
            return {
            allowed,
            full,
            count: out[3 * i],
            limit: w.limit,
            retryAfterMs: full ? out[3 * i + 1] : 0,
            resetMs: out[3 * i + 2]
          }
          })
        }),
        Effect.orDie
      )
    return RateWindows.of({ hitAll, hit: (key, windowMs, limit) => Effect.map(hitAll([{ key, windowMs, limit }]), (v) => v[0]) })
  })
)
