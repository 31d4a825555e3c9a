/** Calendar months in UTC, the period of monthly token quotas. */

/** `2025-03` for any instant in March 2025 (UTC). */
export const monthKey = (now: Date): string =>
  `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, "0")}`

/** The first instant of the next UTC month: when a monthly quota resets. */
export const startOfNextMonth = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))

/** Whole seconds until the next UTC month starts (at least 1), for `Retry-After`. */
export const secondsUntilNextMonth = (now: Date): number =>
  Math.max(1, Math.ceil((startOfNextMonth(now).getTime() - now.getTime()) / 1000))
