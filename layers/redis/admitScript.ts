import type { Redis } from "ioredis"
import type { AdmissionCount, WindowSpec } from "../../services/AdmissionCounters.ts"
import type { WindowVerdict } from "../../services/RateWindows.ts"
import { scriptCommand } from "./scriptCommand.ts"

/**
 * Admission in one Lua script: an optional monthly quota counter, then sliding windows in sorted sets (score = time
 * in ms), checked and counted atomically so that concurrent hits on several nodes can never overshoot a limit. A
 * used-up quota refuses before any window is touched, so a refused call takes no slot. The server clock (TIME) is
 * the only clock, so nodes with skewed clocks still agree.
 *
 * KEYS: the quota counter when ARGV[2] >= 0, then one key per window.
 * ARGV: member, quota limit (-1: no quota), then (windowMs, limit) per window.
 * Returns: status (1 admitted, 0 rate limited, 2 quota exceeded), quota used, then per window: count,
 * retryAfterMs, resetMs (none when the quota refused).
 */
const SCRIPT = `
local quota = tonumber(ARGV[2])
local first = 1
local used = 0
if quota >= 0 then
  first = 2
  used = tonumber(redis.call('GET', KEYS[1]) or '0')
  if used >= quota then return {2, used} end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS - first + 1
local counts = {}
local allowed = 1
for i = 1, n do
  local key = KEYS[first + i - 1]
  local win = tonumber(ARGV[1 + 2 * i])
  local limit = tonumber(ARGV[2 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - win)
  local c = redis.call('ZCARD', key)
  counts[i] = c
  if c >= limit then allowed = 0 end
end
local out = {allowed, used}
for i = 1, n do
  local key = KEYS[first + i - 1]
  local win = tonumber(ARGV[1 + 2 * i])
  if allowed == 1 then
    redis.call('ZADD', key, now, ARGV[1] .. ':' .. i)
    redis.call('PEXPIRE', key, win)
    counts[i] = counts[i] + 1
  end
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local o = now
  if oldest[2] then o = tonumber(oldest[2]) end
  out[3 * i] = counts[i]
  out[3 * i + 1] = math.max(1, o + win - now)
  out[3 * i + 2] = math.max(0, o + win - now)
end
return out
`

/** The Redis key of a sliding window, shared by RateWindowsRedis and AdmissionCountersRedis. */
export const windowKey = (prefix: string, key: string) => `${prefix}rw:${key}`

const COMMAND = "privacyRelayAdmit"

type AdmitCommand = (numKeys: number, ...args: Array<string | number>) => Promise<Array<number>>

/** Runs admission for `quotaKey` (full Redis key, or undefined for none) and the windows (full Redis keys). */
export const makeAdmit = (redis: Redis) => {
  const run = scriptCommand<AdmitCommand>(redis, COMMAND, SCRIPT)
  return async (
    quota: { readonly key: string; readonly limit: number } | undefined,
    windows: ReadonlyArray<WindowSpec>
  ): Promise<AdmissionCount> => {
    const keys = windows.map((w) => w.key)
    if (quota !== undefined) keys.unshift(quota.key)
    const out = await run(
      keys.length,
      ...keys,
      crypto.randomUUID(),
      quota === undefined ? -1 : quota.limit,
      ...windows.flatMap((w) => [w.windowMs, w.limit])
    )
    if (out[0] === 2) return { _tag: "QuotaExceeded", used: out[1] }
    const allowed = out[0] === 1
    return {
      _tag: "Counted",
      used: out[1],
      windows: windows.map((w, i): WindowVerdict => {
        const count = out[3 * i + 2]
        const full = !allowed && count >= w.limit
        return {
          allowed,
          full,
          count,
          limit: w.limit,
          retryAfterMs: full ? out[3 * i + 3] : 0,
          resetMs: out[3 * i + 4]
        }
      })
    }
  }
}
