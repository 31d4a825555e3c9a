// The webhook retry schedule as data, and the delivery state table as a pure function
// (docs/webhooks.md, "Outcomes and retries").

import { MAX_ATTEMPTS } from "../../sdks/typescript/src/wire/webhooks/attempts.ts"

/** Attempts per delivery; the 7th failed attempt makes the delivery dead. */
export { MAX_ATTEMPTS }

/** Delay before attempts 1..7, in ms: 0, 15 s, 1 m, 5 m, 15 m, 1 h, 6 h. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  0,
  15_000,
  60_000,
  5 * 60_000,
  15 * 60_000,
  60 * 60_000,
  6 * 60 * 60_000
])

/** Receivers must answer 2xx within this time; a slower answer is a timeout (spec, Limits). */
export const DELIVERY_TIMEOUT_MS = 8_000

/**
 * Reads WEBHOOK_RETRY_SCHEDULE_MS: a comma list of exactly 7 non-negative integer delays in ms,
 * the first being the delay before attempt 1. Unset or blank means the default schedule. Anything
 * else throws, so a mistyped setting stops the gateway at start instead of silently retrying wrongly.
 */
export const parseScheduleOverride = (value: string | undefined): readonly number[] => {
  if (value === undefined || value.trim() === "") return DEFAULT_RETRY_SCHEDULE_MS
  const entries = value.split(",").map((entry) => entry.trim())
  if (entries.length !== MAX_ATTEMPTS) {
    throw new RangeError(`WEBHOOK_RETRY_SCHEDULE_MS must have ${MAX_ATTEMPTS} comma-separated entries, got ${entries.length}`)
  }
  return Object.freeze(
    entries.map((entry, index) => {
      const delay = Number(entry)
      if (!/^[0-9]+$/.test(entry) || !Number.isSafeInteger(delay)) {
        throw new RangeError(`WEBHOOK_RETRY_SCHEDULE_MS entry ${index + 1} must be a non-negative integer of ms, got "${entry}"`)
      }
      return delay
    })
  )
}

/**
 * Delay before the next attempt, given how many attempts were already made (0 before the first).
 * Undefined once all attempts are used up.
 */
export const nextAttemptDelay = (
  attemptCountSoFar: number,
  schedule: readonly number[] = DEFAULT_RETRY_SCHEDULE_MS
): number | undefined => {
  if (!Number.isInteger(attemptCountSoFar) || attemptCountSoFar < 0) {
    throw new RangeError("attemptCountSoFar must be a non-negative integer")
  }
  return attemptCountSoFar < MAX_ATTEMPTS ? schedule[attemptCountSoFar] : undefined
}

export type AttemptOutcome = {
  /** Final HTTP status of the receiver's response (redirects are never followed). */
  readonly status?: number
  /** Set when no response arrived: no 2xx within DELIVERY_TIMEOUT_MS, or a connection/DNS/TLS/SSRF-refusal failure. */
  readonly error?: "timeout" | "network"
}

export type DeliveryDecision =
  | { readonly state: "delivered" }
  | { readonly state: "dead"; readonly pauseEndpoint: boolean }
  | { readonly state: "retrying"; readonly delayMs: number }

/**
 * The delivery state table, for attempt number `attemptNumber` (1..7) that just ended:
 * - 2xx: delivered.
 * - 410: dead, and the endpoint is paused.
 * - other 4xx: dead, no retry.
 * - 5xx, timeout, network failure: retried per schedule while fewer than 7 attempts are used; the
 *   7th failure is dead (attempt_count 7).
 * - 3xx (our choice; the spec only says redirects are not followed): the redirect is not followed
 *   and the attempt counts as a failed, retryable attempt like a 5xx. It is not a rejection of the
 *   event by the receiver (that is what 4xx means), retrying is bounded by the 7 attempts, and it
 *   gives an operator who moved their endpoint hours to fix it without losing the event; the
 *   Location target is never contacted, so the SSRF guarantee is unaffected.
 * - any other status (1xx, or outside 100..599) and an outcome with neither status nor error are
 *   treated as a network failure: we never got a usable answer.
 */
export const classifyOutcome = (
  outcome: AttemptOutcome,
  attemptNumber: number,
  schedule: readonly number[] = DEFAULT_RETRY_SCHEDULE_MS
): DeliveryDecision => {
  if (!Number.isInteger(attemptNumber) || attemptNumber < 1 || attemptNumber > MAX_ATTEMPTS) {
    throw new RangeError(`attemptNumber must be an integer from 1 to ${MAX_ATTEMPTS}`)
  }
  const status = outcome.error === undefined ? outcome.status : undefined
  if (status !== undefined && Number.isInteger(status)) {
    if (status >= 200 && status <= 299) return { state: "delivered" }
    if (status === 410) return { state: "dead", pauseEndpoint: true }
    if (status >= 400 && status <= 499) return { state: "dead", pauseEndpoint: false }
  }
  if (attemptNumber >= MAX_ATTEMPTS) return { state: "dead", pauseEndpoint: false }
  return { state: "retrying", delayMs: schedule[attemptNumber]! }
}
