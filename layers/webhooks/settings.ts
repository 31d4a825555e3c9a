import type { GatewayConfig } from "../../src/config/gatewayConfig.ts"

/** Webhook settings (documented in docs/webhooks.md, "Settings"). */
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

/** The webhook settings of the gateway's schema (src/config/gatewaySettings.ts), validated at start-up. */
export const webhookSettings = (config: GatewayConfig): WebhookSettings => ({
  allowLoopback: config.settings.webhookAllowLoopback,
  schedule: config.settings.webhookRetryScheduleMs,
  timeoutMs: config.settings.webhookTimeoutMs,
  pollMs: config.settings.webhookPollMs,
  dispatcherEnabled: config.settings.webhookDispatcher,
  concurrency: config.settings.webhookConcurrency
})
