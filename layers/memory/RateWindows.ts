import { Clock, Effect, Layer } from "effect"
import { RateWindows, type WindowVerdict } from "../../services/RateWindows.ts"

/**
 * In-process sliding windows: a timestamp log per key. Correct for ONE gateway process only; with several
 * nodes set REDIS_URL (docs/configuration.md).
 */
export const RateWindowsMemory = Layer.effect(
  RateWindows,
  Effect.sync(() => {
    const { hitAllAt } = makeWindowLogs()
    const hitAll = (windows: ReadonlyArray<{ key: string; windowMs: number; limit: number }>) =>
      Effect.map(Clock.currentTimeMillis, (now) => hitAllAt(windows, now, true))
    return RateWindows.of({
      hitAll,
      hit: (key, windowMs, limit) => Effect.map(hitAll([{ key, windowMs, limit }]), (v) => v[0])
    })
  })
)

/**
 * Timestamp logs per key, synchronous: `hitAllAt` counts the event in every window when all allow it (and `count`
 * is true); with `count` false it only reports, so a caller can check windows and decide on something else first.
 */
export const makeWindowLogs = () => {
    const logs = new Map<string, Array<number>>()
    let sweeps = 0

    const live = (key: string, now: number, windowMs: number) => {
      const log = logs.get(key) ?? []
      let drop = 0
      while (drop < log.length && log[drop] <= now - windowMs) drop++
      if (drop > 0) log.splice(0, drop)
      return log
    }

    const verdict = (log: Array<number>, now: number, windowMs: number, limit: number, allowed: boolean): WindowVerdict => {
      const oldest = log[0] ?? now
      const full = !allowed && log.length >= limit
      return {
        allowed,
        full,
        count: log.length,
        limit,
        retryAfterMs: full ? Math.max(1, oldest + windowMs - now) : 0,
        resetMs: Math.max(0, oldest + windowMs - now)
      }
    }

    // Empty logs are dropped now and then so idle keys do not accumulate.
    const maybeSweep = (now: number) => {
      if (++sweeps % 10_000 !== 0) return
      for (const [key, log] of logs) if (log.length === 0 || log[log.length - 1] < now - 86_400_000) logs.delete(key)
    }

    const hitAllAt = (windows: ReadonlyArray<{ key: string; windowMs: number; limit: number }>, now: number, count: boolean): Array<WindowVerdict> => {
      maybeSweep(now)
      const current = windows.map((w) => live(w.key, now, w.windowMs))
      const allowed = current.every((log, i) => log.length < windows[i].limit)
      return current.map((log, i) => {
        if (allowed && count) {
          log.push(now)
          logs.set(windows[i].key, log)
        }
        return verdict(log, now, windows[i].windowMs, windows[i].limit, allowed)
      })
    }
    /** Takes one event counted at `at` out of each of these logs (an admission given back whole). */
    const forget = (keys: ReadonlyArray<string>, at: number) => {
      for (const key of keys) {
        const log = logs.get(key)
        const i = log === undefined ? -1 : log.lastIndexOf(at)
        if (i >= 0) log!.splice(i, 1)
      }
    }
    return { hitAllAt, forget }
}
