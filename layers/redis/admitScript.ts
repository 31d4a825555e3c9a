import type { Redis } from "ioredis"
import type { AdmissionCount, AdmissionFinish, HoldRequest, SlotRequest, WindowSpec } from "../../services/AdmissionCounters.ts"
import { DONE_MARK_TTL_MS } from "../../services/AdmissionCounters.ts"
import type { WindowVerdict } from "../../services/RateWindows.ts"
import { scriptCommand } from "./scriptCommand.ts"

/**
 * Admission in one Lua script (one round trip): the idempotency slot, an optional monthly quota counter, sliding
 * windows in sorted sets (score = time in ms), and the wallet hold against the balance mirror, checked and taken
 * atomically so that concurrent calls on several nodes can never overshoot a limit or the balance. A busy slot
 * refuses before anything is read; a used-up quota before any window is touched; a call is counted in the windows,
 * holds money and takes the slot only when everything admits it. The server clock (TIME) is the only clock, so
 * nodes with skewed clocks still agree.
 *
 * KEYS: 1 slot, 2 slot's done mark, 3 balance mirror, 4 held sum, 5 holds (hash id -> micros), 6 hold expiries
 * (sorted set), 7 mirror generation, 8 quota counter, 9 every node's open holds (sorted set by expiry, for the
 * metrics gauge), then one key per window.
 * ARGV: 1 member, 2 slot owner ('' = no slot), 3 slot TTL ms, 4 hold id ('' = no hold), 5 hold micros, 6 hold TTL ms,
 * 7 quota limit (-1: no quota), then (windowMs, limit) per window.
 * Returns: status (1 counted, 0 rate limited, 2 quota exceeded, 3 slot taken), quota used (slot taken: 1 when done),
 * hold (1 granted, 0 insufficient, 2 unknown), generation, then per window: count, retryAfterMs, resetMs.
 */
const ADMIT = `
if ARGV[2] ~= '' then
  if redis.call('EXISTS', KEYS[2]) == 1 then return {3, 1} end
  if redis.call('EXISTS', KEYS[1]) == 1 then return {3, 0} end
end
local quota = tonumber(ARGV[7])
local used = 0
if quota >= 0 then
  used = tonumber(redis.call('GET', KEYS[8]) or '0')
  if used >= quota then return {2, used} end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS - 9
local counts = {}
local allowed = 1
for i = 1, n do
  local key = KEYS[9 + i]
  local win = tonumber(ARGV[6 + 2 * i])
  local limit = tonumber(ARGV[7 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - win)
  local c = redis.call('ZCARD', key)
  counts[i] = c
  if c >= limit then allowed = 0 end
end
local hold = 1
local gen = redis.call('GET', KEYS[7]) or '0'
if allowed == 1 and ARGV[4] ~= '' then
  local expired = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now)
  for _, id in ipairs(expired) do
    local a = redis.call('HGET', KEYS[5], id)
    if a then
      redis.call('DECRBY', KEYS[4], a)
      redis.call('HDEL', KEYS[5], id)
    end
    redis.call('ZREM', KEYS[6], id)
    redis.call('ZREM', KEYS[9], id)
  end
  local bal = redis.call('GET', KEYS[3])
  if not bal then
    hold = 2
  elseif tonumber(bal) - tonumber(redis.call('GET', KEYS[4]) or '0') <= 0 then
    hold = 0
  end
end
local take = allowed == 1 and hold == 1
if take and ARGV[4] ~= '' then
  local ttl = tonumber(ARGV[6])
  redis.call('HSET', KEYS[5], ARGV[4], ARGV[5])
  redis.call('ZADD', KEYS[6], now + ttl, ARGV[4])
  redis.call('ZADD', KEYS[9], now + ttl, ARGV[4])
  redis.call('INCRBY', KEYS[4], ARGV[5])
  redis.call('PEXPIRE', KEYS[4], ttl)
  redis.call('PEXPIRE', KEYS[5], ttl)
  redis.call('PEXPIRE', KEYS[6], ttl)
end
if take and ARGV[2] ~= '' then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
local out = {allowed, used, hold, gen}
for i = 1, n do
  local key = KEYS[9 + i]
  local win = tonumber(ARGV[6 + 2 * i])
  if take then
    redis.call('ZADD', key, now, ARGV[1] .. ':' .. i)
    redis.call('PEXPIRE', key, win)
    counts[i] = counts[i] + 1
  end
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local o = now
  if oldest[2] then o = tonumber(oldest[2]) end
  out[2 + 3 * i] = counts[i]
  out[3 + 3 * i] = math.max(1, o + win - now)
  out[4 + 3 * i] = math.max(0, o + win - now)
end
return out
`

/**
 * The end of a call, in one script: the hold released (if still there) and the mirror debited by what the committed
 * settlement billed (the generation moves with every debit, mirror or not, so a load that raced it is refused), the
 * tokens added to the monthly quota, the slot released by its owner and, when a response was stored under it,
 * marked done for a while (a request that looked for the record just before it was written then looks again).
 *
 * With an `uncount`, the admission's entries are taken out of its windows (a call given back whole).
 *
 * KEYS: 1 slot, 2 done mark, 3 balance mirror, 4 held sum, 5 holds, 6 hold expiries, 7 generation, 8 quota counter,
 * 9 open holds, then the windows to take the entry out of (in the admission's order).
 * ARGV: 1 slot owner ('' = none), 2 stored ('1'/'0'), 3 done TTL ms, 4 hold id ('' = none), 5 debit micros,
 * 6 quota tokens (-1 = none), 7 quota expiry (Unix seconds), 8 the admission's window member ('' = none).
 */
const FINISH = `
if ARGV[4] ~= '' then
  local a = redis.call('HGET', KEYS[5], ARGV[4])
  if a then
    redis.call('DECRBY', KEYS[4], a)
    redis.call('HDEL', KEYS[5], ARGV[4])
    redis.call('ZREM', KEYS[6], ARGV[4])
  end
  redis.call('ZREM', KEYS[9], ARGV[4])
  if ARGV[5] ~= '0' then
    if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('DECRBY', KEYS[3], ARGV[5]) end
    redis.call('INCR', KEYS[7])
    redis.call('PEXPIRE', KEYS[7], 86400000)
  end
end
if tonumber(ARGV[6]) > 0 then
  redis.call('INCRBY', KEYS[8], ARGV[6])
  redis.call('EXPIREAT', KEYS[8], ARGV[7])
end
if ARGV[1] ~= '' then
  if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
  if ARGV[2] == '1' then redis.call('SET', KEYS[2], '1', 'PX', ARGV[3]) end
end
if ARGV[8] ~= '' then
  for i = 10, #KEYS do redis.call('ZREM', KEYS[i], ARGV[8] .. ':' .. (i - 9)) end
end
return 1
`

/** The mirror loaded from PostgreSQL, unless a debit moved the generation since the caller read it. */
const SEED = `
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`

/** The Redis key of a sliding window, shared by RateWindowsRedis and AdmissionCountersRedis. */
export const windowKey = (prefix: string, key: string) => `${prefix}rw:${key}`
/** The Redis key of a slot, shared with SlotsRedis. */
export const slotKey = (prefix: string, key: string) => `${prefix}slot:${key}`

/** Every node's holds by expiry: what the metrics gauge counts (a hold past its expiry no longer counts). */
const openHoldsKey = (prefix: string) => `${prefix}holds-open`

/** Keys outlive their month by this much, then Redis drops them (as QuotasRedis). */
const KEEP_AFTER_MONTH_S = 40 * 86_400
const monthEndSeconds = (month: string) => {
  const [y, m] = month.split("-").map(Number)
  return Math.floor(Date.UTC(y, m, 1) / 1000)
}

type Script = (numKeys: number, ...args: Array<string | number>) => Promise<Array<number | string>>

/** The wallet's and the slot's keys, in the scripts' order (1-7). */
const walletKeys = (prefix: string, orgId: string, slot: string | undefined) => [
  slot === undefined ? `${prefix}slot:-` : slotKey(prefix, slot),
  slot === undefined ? `${prefix}idone:-` : `${prefix}idone:${slot}`,
  `${prefix}bal:${orgId}`,
  `${prefix}held:${orgId}`,
  `${prefix}holds:${orgId}`,
  `${prefix}holdx:${orgId}`,
  `${prefix}balgen:${orgId}`
]

/**
 * The three scripts over one connection. Keys are given WITHOUT the prefix: quota keys are Quotas' (quotaKey), window
 * keys RateWindows' (both prefixed here as QuotasRedis and RateWindowsRedis do).
 */
export const makeAdmission = (redis: Redis, prefix: string) => {
  const admitRun = scriptCommand<Script>(redis, "privacyRelayAdmit2", ADMIT)
  const finishRun = scriptCommand<Script>(redis, "privacyRelayFinish", FINISH)
  const seedRun = scriptCommand<Script>(redis, "privacyRelaySeed", SEED)

  const admit = async (input: {
    readonly quota: { readonly key: string; readonly limit: number } | undefined
    readonly windows: ReadonlyArray<WindowSpec>
    readonly hold?: HoldRequest
    readonly slot?: SlotRequest
  }): Promise<AdmissionCount> => {
    const { windows, hold, slot } = input
    const keys = [
      ...walletKeys(prefix, hold?.orgId ?? "-", slot?.key),
      input.quota === undefined ? `${prefix}quota:-` : prefix + input.quota.key,
      openHoldsKey(prefix),
      ...windows.map((w) => windowKey(prefix, w.key))
    ]
    const member = crypto.randomUUID()
    const out = await admitRun(
      keys.length,
      ...keys,
      member,
      slot?.owner ?? "",
      slot?.ttlMs ?? 0,
      hold?.id ?? "",
      (hold?.amountMicros ?? 0n).toString(),
      hold?.ttlMs ?? 0,
      input.quota === undefined ? -1 : input.quota.limit,
      ...windows.flatMap((w) => [w.windowMs, w.limit])
    )
    const status = Number(out[0])
    if (status === 3) return { _tag: "SlotTaken", done: Number(out[1]) === 1 }
    if (status === 2) return { _tag: "QuotaExceeded", used: Number(out[1]) }
    const allowed = status === 1
    const holdCode = Number(out[2])
    return {
      _tag: "Counted",
      used: Number(out[1]),
      hold: holdCode === 1 ? "granted" : holdCode === 0 ? "insufficient" : "unknown",
      generation: String(out[3]),
      entry: { keys: windows.map((w) => w.key), id: member },
      windows: windows.map((w, i): WindowVerdict => {
        const count = Number(out[3 * i + 4])
        const full = !allowed && count >= w.limit
        return {
          allowed,
          full,
          count,
          limit: w.limit,
          retryAfterMs: full ? Number(out[3 * i + 5]) : 0,
          resetMs: Number(out[3 * i + 6])
        }
      })
    }
  }

  const finish = (input: AdmissionFinish & { readonly quotaKey?: string }) => {
    const keys = [
      ...walletKeys(prefix, input.hold?.orgId ?? "-", input.slot?.key),
      input.quotaKey === undefined ? `${prefix}quota:-` : prefix + input.quotaKey,
      openHoldsKey(prefix),
      ...(input.uncount?.keys ?? []).map((k) => windowKey(prefix, k))
    ]
    return finishRun(
      keys.length,
      ...keys,
      input.slot?.owner ?? "",
      input.slot?.stored === true ? "1" : "0",
      DONE_MARK_TTL_MS,
      input.hold?.id ?? "",
      (input.hold?.debitMicros ?? 0n).toString(),
      input.quota === undefined || input.quota.tokens <= 0 ? -1 : input.quota.tokens,
      input.quota === undefined ? 0 : monthEndSeconds(input.quota.month) + KEEP_AFTER_MONTH_S,
      input.uncount?.id ?? ""
    )
  }

  const seed = async (input: { readonly orgId: string; readonly generation: string; readonly balanceMicros: bigint; readonly ttlMs: number }) => {
    const [, , bal, , , , gen] = walletKeys(prefix, input.orgId, undefined)
    // Redis refuses PX 0; WALLET_MIRROR_TTL_MS=0 ("re-read every call") keeps the mirror 1 ms, long enough for the
    // admission that follows the read, as the in-process mirror does with its same-millisecond expiry.
    return Number(await seedRun(2, bal, gen, input.generation, input.balanceMicros.toString(), Math.max(1, input.ttlMs))) === 1
  }

  /** Holds taken and neither finished nor expired, across all nodes (expired entries are trimmed on the way). */
  const openHolds = async () => {
    const key = openHoldsKey(prefix)
    await redis.zremrangebyscore(key, "-inf", Date.now())
    return redis.zcard(key)
  }

  return { admit, finish, seed, openHolds }
}

/** Window-only admission (RateWindowsRedis): the same script without slot, quota or hold. */
export const makeAdmit = (redis: Redis, prefix: string) => {
  const { admit } = makeAdmission(redis, prefix)
  return (windows: ReadonlyArray<WindowSpec>) => admit({ quota: undefined, windows })
}
