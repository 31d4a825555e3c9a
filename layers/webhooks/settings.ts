import { parseScheduleOverride, DELIVERY_TIMEOUT_MS } from "../../src/webhooks/schedule.ts"

/** Webhook settings read from the environment (documented in docs/webhooks.md, "Settings"). */
export interface WebhookSettings {
  /** WEBHOOK_ALLOW_LOOPBACK=1: plain-http 127.0.0.1 / [::1] targets allowed. Tests only. */
  readonly allowLoopback: boolean
  /** WEBHOOK_RETRY_SCHEDULE_MS: 7 delays in ms, the first before attempt 1. */
  readonly schedule: readonly number[]
  /** WEBHOOK_TIMEOUT_MS: how long a receiver has to answer (default 8000, the spec's limit). */
  readonly timeoutMs: number
  /** WEBHOOK_POLL_MS: how often the dispatcher looks for due work when nothing woke it (default 200). */
  readonly pollMs: number
  /** WEBHOOK_DISPATCHER=off: this process serves the API but does not deliver (another process does). */
  readonly dispatcherEnabled: boolean
  /** WEBHOOK_CONCURRENCY: attempts in flight at once per process (default 16). */
  readonly concurrency: number
}

const positiveInteger = (env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const value = Number(raw.trim())
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got "${raw}"`)
  return value
}

/** Throws on a malformed setting, so a typo stops the gateway at start instead of delivering wrongly. */
export const parseWebhookSettings = (env: Readonly<Record<string, string | undefined>>): WebhookSettings => {
  const dispatcher = (env.WEBHOOK_DISPATCHER ?? "on").trim().toLowerCase()
  if (!["on", "off", "1", "0", "true", "false"].includes(dispatcher)) {
    throw new RangeError(`WEBHOOK_DISPATCHER must be on or off, got "${env.WEBHOOK_DISPATCHER}"`)
  }
  return {
    allowLoopback: env.WEBHOOK_ALLOW_LOOPBACK === "1",
    schedule: parseScheduleOverride(env.WEBHOOK_RETRY_SCHEDULE_MS),
    timeoutMs: positiveInteger(env, "WEBHOOK_TIMEOUT_MS", DELIVERY_TIMEOUT_MS),
    pollMs: positiveInteger(env, "WEBHOOK_POLL_MS", 200),
    dispatcherEnabled: ["on", "1", "true"].includes(dispatcher),
    concurrency: positiveInteger(env, "WEBHOOK_CONCURRENCY", 16)
  }
}
