import { Context, Effect } from "effect"

/** Result of counting one event against a sliding window. */
export interface WindowVerdict {
  readonly allowed: boolean
  /** This window was the one (or one of those) at its limit; only such windows say when to retry. */
  readonly full: boolean
  /** Events in the window, this one included when allowed. */
  readonly count: number
  readonly limit: number
  /** When this window is full: milliseconds until its oldest event leaves it; otherwise 0. */
  readonly retryAfterMs: number
  /** Milliseconds until the window has room again for a full reset (for the RateLimit header). */
  readonly resetMs: number
}

/**
 * Sliding-window counters shared by every gateway node (Redis) or by one process (memory).
 * `hit` counts an event only when it is allowed, atomically with the check, so a burst cannot overshoot.
 */
export class RateWindows extends Context.Service<RateWindows, {
  readonly hit: (key: string, windowMs: number, limit: number) => Effect.Effect<WindowVerdict>
  /** Checks several windows at once: the event counts in all of them, or in none. */
  readonly hitAll: (
    windows: ReadonlyArray<{ readonly key: string; readonly windowMs: number; readonly limit: number }>
  ) => Effect.Effect<ReadonlyArray<WindowVerdict>>
}>()("privacy-relay/RateWindows") {}
