/**
 * The receipt signing key's rotation schedule (RECEIPT_KEY_ROTATION; docs/receipts.md, "Signing keys"): which period
 * an instant falls in, when the next one starts, and a period's name. Pure; times are Unix milliseconds, periods are
 * UTC, and every gateway process computes them from the database clock, so all agree on the boundaries.
 *
 *   quarterly (default)  calendar quarters: 1 January, 1 April, 1 July, 1 October, 00:00 UTC; names "2025-Q2"
 *   monthly              calendar months; names "2025-04"
 *   yearly               calendar years; names "2025"
 *   <n>ms|s|m|h|d        a fixed period counted from the Unix epoch (2s, 90d): compressed schedules for tests and
 *                        drills; names are the period's start in RFC 3339
 *   off                  no scheduled rotation (on demand only)
 */
import { ConfigInvalid } from "../../sdks/typescript/src/wire/config/setting.ts"

export type RotationSchedule =
  | { readonly kind: "off"; readonly name: "off" }
  | { readonly kind: "calendar"; readonly name: "quarterly" | "monthly" | "yearly"; readonly months: 1 | 3 | 12 }
  | { readonly kind: "fixed"; readonly name: string; readonly periodMs: number }

export const DEFAULT_ROTATION = "quarterly"

/** A fixed period shorter than this is refused: the boundary check itself runs about this often. */
export const MIN_FIXED_PERIOD_MS = 1000

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Parses RECEIPT_KEY_ROTATION (unset or empty: quarterly). Throws ConfigInvalid (the gateway then does not start). */
export const parseRotationSchedule = (raw: string | undefined): RotationSchedule => {
  const value = (raw ?? "").trim().toLowerCase() || DEFAULT_ROTATION
  if (value === "off") return { kind: "off", name: "off" }
  if (value === "quarterly") return { kind: "calendar", name: "quarterly", months: 3 }
  if (value === "monthly") return { kind: "calendar", name: "monthly", months: 1 }
  if (value === "yearly") return { kind: "calendar", name: "yearly", months: 12 }
  const match = /^([0-9]{1,12})(ms|s|m|h|d)$/.exec(value)
  const periodMs = match === null ? NaN : Number(match[1]) * UNITS[match[2]!]!
  if (!(periodMs >= MIN_FIXED_PERIOD_MS) || !Number.isSafeInteger(periodMs)) {
    throw new ConfigInvalid(
      `RECEIPT_KEY_ROTATION must be quarterly, monthly, yearly, off, or a period of at least 1s such as 90d, 12h or 2s (got ${JSON.stringify(raw)})`
    )
  }
  return { kind: "fixed", name: value, periodMs }
}

const monthIndex = (atMs: number) => {
  const d = new Date(atMs)
  return d.getUTCFullYear() * 12 + d.getUTCMonth()
}
const monthStart = (index: number) => Date.UTC(Math.floor(index / 12), index % 12, 1)

/** Start of the period that contains `atMs`; undefined when the schedule is off. */
export const periodStartOf = (schedule: RotationSchedule, atMs: number): number | undefined => {
  switch (schedule.kind) {
    case "off":
      return undefined
    case "calendar": {
      const index = monthIndex(atMs)
      return monthStart(index - (index % schedule.months))
    }
    case "fixed":
      return Math.floor(atMs / schedule.periodMs) * schedule.periodMs
  }
}

/** Start of the period after the one that contains `atMs`; undefined when the schedule is off. */
export const nextPeriodStart = (schedule: RotationSchedule, atMs: number): number | undefined => {
  const start = periodStartOf(schedule, atMs)
  if (start === undefined) return undefined
  return schedule.kind === "calendar" ? monthStart(monthIndex(start) + schedule.months) : start + (schedule as { periodMs: number }).periodMs
}

/** The name of the period starting at `startMs`: "2025-Q2", "2025-04", "2025", or the RFC 3339 start. */
export const periodName = (schedule: RotationSchedule, startMs: number): string => {
  const d = new Date(startMs)
  const year = String(d.getUTCFullYear())
  if (schedule.kind !== "calendar") return d.toISOString()
  if (schedule.months === 12) return year
  if (schedule.months === 3) return `${year}-Q${Math.floor(d.getUTCMonth() / 3) + 1}`
  return `${year}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`
}
