/**
 * Every setting of the gateway (programs/gateway.ts, `npm start`, the operator CLI), as one schema
 * (sdks/typescript/src/wire/config/setting.ts): its variable, what it allows, its default. parseGatewayConfig reads all of it at start-up,
 * so a bad value stops the gateway with one line before anything listens; layers read the typed values from
 * `AppConfig.settings`, never the environment. docs/configuration.md documents exactly these variables
 * (test/docs/configurationSchema.test.ts).
 *
 * Only pure modules are imported (no `effect`): the CLI reads these before deciding whether to load the gateway.
 */
import { readFileSync } from "node:fs"
import type { EngineAllowlist } from "../../sdks/typescript/src/wire/attestation/engine-allowlist.ts"
import { tryParseUsd } from "../billing/money.ts"
import { parseTierLimits } from "../billing/limits.ts"
import { DEFAULT_TOPUP_MAX_MICROS, DEFAULT_TOPUP_MIN_MICROS } from "../billing/topupAmount.ts"
import { parseRotationSchedule } from "../receipts/rotationSchedule.ts"
import { DELIVERY_TIMEOUT_MS, parseScheduleOverride } from "../webhooks/schedule.ts"
import { ConfigInvalid, custom, type Env, family, nonEmpty, numberIn, oneOf, onOff, port, readSettings, type Setting, type SettingsOf, text } from "../../sdks/typescript/src/wire/config/setting.ts"

/** A parser that throws its own error (RangeError, SyntaxError, ...) becomes one ConfigInvalid line naming the variable. */
const rethrowAsInvalid = <A>(name: string, parse: () => A): A => {
  try {
    return parse()
  } catch (e) {
    if (e instanceof ConfigInvalid) throw e
    const message = (e as Error).message
    throw new ConfigInvalid(message.startsWith(name) ? message : `${name}: ${message}`)
  }
}

/**
 * A setting given either in the environment (`NAME`) or, for URLs that embed a password, in a file named by
 * `NAME_FILE` (a mounted secret, like the other *_FILE settings); both at once is a mistake, not a precedence rule.
 */
const valueOrFile = (name: string): Setting<string | undefined> => ({
  name,
  alsoReads: [`${name}_FILE`],
  allowed: `set in ${name} or in the file ${name}_FILE names, not both`,
  fallback: "unset",
  read: (env) => {
    const file = nonEmpty(env[`${name}_FILE`])
    const value = nonEmpty(env[name])
    if (file === undefined) return value
    if (value !== undefined) throw new ConfigInvalid(`set ${name} or ${name}_FILE, not both`)
    let content: string
    try {
      content = readFileSync(file, "utf8")
    } catch (e) {
      throw new ConfigInvalid(`${name}_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? "error"})`)
    }
    const fromFile = nonEmpty(content)
    if (fromFile === undefined) throw new ConfigInvalid(`${name}_FILE: ${file} is empty`)
    return fromFile
  }
})

/** A positive decimal USD amount, in micros. */
const positiveUsd = (name: string, fallback: bigint, fallbackText: string): Setting<bigint> =>
  custom(name, "a positive decimal USD amount", fallbackText, (raw, fail) => {
    if (raw === undefined || raw.trim() === "") return fallback
    const parsed = tryParseUsd(raw.trim())
    return parsed !== undefined && parsed > 0n ? parsed : fail(raw)
  })

/** The raw value, untouched (settings whose blank value has always been taken as given). */
const verbatim = (name: string, fallback = "unset"): Setting<string | undefined> => custom(name, "any text", fallback, (raw) => raw)

const isHttpUrl = (raw: string) => {
  try {
    return ["http:", "https:"].includes(new URL(raw.trim()).protocol)
  } catch {
    return false
  }
}

export const GATEWAY_SETTINGS = {
  // Listening and identity
  host: custom("HOST", "a listen address", "127.0.0.1", (raw) => raw ?? "127.0.0.1"),
  port: port("PORT", 8080),
  publicBaseUrl: verbatim("PUBLIC_BASE_URL", "http://HOST:PORT"),
  trustedProxies: custom("TRUSTED_PROXIES", "a comma-separated list of addresses", "empty", (raw) =>
    (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean)),
  portalOrigin: text("PORTAL_ORIGIN"),
  portalDir: text("PORTAL_DIR", "portal/dist"),
  shutdownGraceMs: numberIn("SHUTDOWN_GRACE_MS", { fallback: 20_000, min: 0, max: 600_000, unit: "milliseconds" }),
  serverTiming: onOff("SERVER_TIMING", true),
  // Storage
  databaseUrl: valueOrFile("DATABASE_URL"),
  pgMaxConnections: numberIn("PG_MAX_CONNECTIONS", { fallback: 10, min: 1 }),
  redisUrl: valueOrFile("REDIS_URL"),
  redisPrefix: custom("REDIS_PREFIX", "any text", "pr:", (raw) => raw ?? "pr:"),
  dataDir: custom("DATA_DIR", "a directory, or :memory:", "./.data", (raw) => raw === ":memory:" ? undefined : (nonEmpty(raw) ?? "./.data")),
  kekFile: text("KEK_FILE"),
  kekPreviousFile: text("KEK_PREVIOUS_FILE"),
  // Observability
  logLevel: oneOf("LOG_LEVEL", ["debug", "info", "warn", "error"], "info"),
  traceSampleRatio: custom("TRACE_SAMPLE_RATIO", "a number between 0 and 1", "0.01", (raw, fail) => {
    const ratio = Number(raw ?? "0.01")
    return ratio >= 0 && ratio <= 1 ? ratio : fail(raw)
  }),
  otlpEndpoint: text("OTEL_EXPORTER_OTLP_ENDPOINT"),
  metricsTokenFile: text("METRICS_TOKEN_FILE"),
  // Relay
  engineAllowlist: custom("ENGINE_ALLOWLIST_JSON", "a JSON array of engines [{\"id\",\"minVersion\",\"sha256\"?}]", "the official engines", (raw, fail) => {
    if (raw === undefined || raw === "") return undefined
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      return fail()
    }
    return Array.isArray(parsed) ? (parsed as EngineAllowlist) : fail()
  }),
  rateLimits: custom("RATE_LIMITS_JSON", "per-tier limits as JSON (docs/billing.md)", "docs/billing.md", (raw) =>
    rethrowAsInvalid("RATE_LIMITS_JSON", () => parseTierLimits(raw))),
  walletMirrorTtlMs: custom("WALLET_MIRROR_TTL_MS", "a number of milliseconds, 0 or more (below 50 counts as 50)", "10000", (raw, fail) => {
    if (raw === undefined || raw.trim() === "") return 10_000
    const v = Number(raw)
    // A mirror read must outlive the admission it was read for (the next step, one more Redis round trip away): with
    // a shorter life the admission finds it gone again and refuses the call as if the wallet were empty.
    return Number.isFinite(v) && v >= 0 ? Math.max(50, v) : fail(raw)
  }),
  providerCoolDownMs: numberIn("PROVIDER_COOLDOWN_MS", { fallback: 30_000, min: 0, unit: "milliseconds" }),
  localProviderUrl: text("LOCAL_PROVIDER_URL", "http://127.0.0.1:8788"),
  providerBaseUrls: family("PROVIDER_<SLUG>_BASE_URL", /^PROVIDER_([A-Z0-9_]+)_BASE_URL$/, "an http(s) origin", (raw, fail) =>
    isHttpUrl(raw) ? raw.trim() : fail()),
  providerKeyFiles: family("PROVIDER_<SLUG>_API_KEY_FILE", /^PROVIDER_([A-Z0-9_]+)_API_KEY_FILE$/, "a file path", (raw) => raw),
  providerTimeoutsMs: family("PROVIDER_<SLUG>_TIMEOUT_MS", /^PROVIDER_([A-Z0-9_]+)_TIMEOUT_MS$/, "a positive number of milliseconds", (raw, fail) => {
    const v = Number(raw)
    return Number.isFinite(v) && v > 0 ? v : fail()
  }),
  /** Life of a node's cached BYOK credentials: a change made on another node reaches this one within it. */
  byokCacheTtlMs: numberIn("BYOK_CACHE_TTL_MS", { fallback: 30_000, min: 0, unit: "milliseconds" }),
  // Receipts
  receiptSigningKeyFile: text("RECEIPT_SIGNING_KEY_FILE"),
  receiptKeyRotation: custom("RECEIPT_KEY_ROTATION", "quarterly, monthly, yearly, off, or a period such as 90d", "quarterly", (raw) =>
    rethrowAsInvalid("RECEIPT_KEY_ROTATION", () => parseRotationSchedule(raw))),
  receiptKeyRotationCheckMs: numberIn("RECEIPT_KEY_ROTATION_CHECK_MS", { fallback: 60_000, min: 1, unit: "milliseconds" }),
  receiptKeysRefreshMs: numberIn("RECEIPT_KEYS_REFRESH_MS", { fallback: 60_000, min: 1, unit: "milliseconds" }),
  receiptChainVerifyMs: numberIn("RECEIPT_CHAIN_VERIFY_MS", { fallback: 60_000, min: 0, unit: "milliseconds" }),
  transparencySequenceMs: numberIn("TRANSPARENCY_SEQUENCE_MS", { fallback: 1000, min: 0, unit: "milliseconds" }),
  retentionDays: custom("RETENTION_DAYS", "a whole number of days from 1 to 36500 (unset keeps everything)", "unset", (raw, fail) => {
    const v = raw?.trim()
    if (v === undefined || v === "") return undefined
    const days = Number(v)
    return /^\d+$/.test(v) && Number.isSafeInteger(days) && days >= 1 && days <= 36_500 ? days : fail(raw)
  }),
  retentionIntervalMs: numberIn("RETENTION_INTERVAL_MS", { fallback: 3_600_000, min: 0, unit: "milliseconds" }),
  // Billing
  paymentsProvider: oneOf("PAYMENTS_PROVIDER", ["dev"], undefined),
  stripeSecretKeyFile: text("STRIPE_SECRET_KEY_FILE"),
  stripeWebhookSecretFile: text("STRIPE_WEBHOOK_SECRET_FILE"),
  stripeApiBase: verbatim("STRIPE_API_BASE", "Stripe's"),
  stripeSuccessUrl: verbatim("STRIPE_SUCCESS_URL", "PUBLIC_BASE_URL/billing?checkout=success"),
  stripeCancelUrl: verbatim("STRIPE_CANCEL_URL", "PUBLIC_BASE_URL/billing?checkout=cancelled"),
  topupMinMicros: positiveUsd("TOPUP_MIN_USD", DEFAULT_TOPUP_MIN_MICROS, "5.00"),
  topupMaxMicros: positiveUsd("TOPUP_MAX_USD", DEFAULT_TOPUP_MAX_MICROS, "10000.00"),
  licenceSigningKeyFile: text("LICENCE_SIGNING_KEY_FILE", "generated into DATA_DIR"),
  lowBalanceThresholdMicros: custom("LOW_BALANCE_THRESHOLD_USD", "a decimal USD amount, 0 or more", "1.00", (raw, fail) =>
    tryParseUsd(nonEmpty(raw) ?? "1.00") ?? fail(raw)),
  // Webhooks
  webhookDispatcher: onOff("WEBHOOK_DISPATCHER", true),
  webhookPollMs: numberIn("WEBHOOK_POLL_MS", { fallback: 200, min: 1, unit: "milliseconds" }),
  webhookConcurrency: numberIn("WEBHOOK_CONCURRENCY", { fallback: 16, min: 1 }),
  webhookRetryScheduleMs: custom("WEBHOOK_RETRY_SCHEDULE_MS", "7 comma-separated whole numbers of milliseconds", "0,15000,60000,300000,900000,3600000,21600000", (raw) =>
    rethrowAsInvalid("WEBHOOK_RETRY_SCHEDULE_MS", () => parseScheduleOverride(raw))),
  webhookTimeoutMs: numberIn("WEBHOOK_TIMEOUT_MS", { fallback: DELIVERY_TIMEOUT_MS, min: 1, unit: "milliseconds" }),
  webhookAllowLoopback: custom("WEBHOOK_ALLOW_LOOPBACK", "1 (tests only) or unset", "unset", (raw, fail) => {
    const v = raw?.trim()
    if (v === undefined || v === "" || v === "0") return false
    return v === "1" ? true : fail(raw)
  }),
  // Accounts and portal
  smtpUrl: text("SMTP_URL"),
  mailFrom: text("MAIL_FROM", "Privacy Relay <no-reply@localhost>"),
  emailVerificationTtlHours: numberIn("EMAIL_VERIFICATION_TTL_HOURS", { fallback: 48, min: 0, integer: false, unit: "hours" }),
  portalSessionTtlHours: numberIn("PORTAL_SESSION_TTL_HOURS", { fallback: 12, min: 0, integer: false, unit: "hours" }),
  keyRotationCheckSeconds: numberIn("KEY_ROTATION_CHECK_SECONDS", { fallback: 3600, min: 1, unit: "seconds" })
} satisfies Readonly<Record<string, Setting<unknown>>>

export type GatewaySettings = SettingsOf<typeof GATEWAY_SETTINGS>

/** Every gateway setting, parsed; throws ConfigInvalid (one line) on the first bad value. */
export const readGatewaySettings = (env: Env): GatewaySettings => readSettings(GATEWAY_SETTINGS, env)

const optionalPort = (name: string, env: Env): number | undefined => {
  const raw = env[name]
  if (raw === undefined || raw === "") return undefined
  const n = Number(raw)
  if (!(Number.isInteger(n) && n >= 0 && n <= 65535)) throw new ConfigInvalid(`${name} must be a port number (0-65535)`)
  return n
}

/**
 * The fake provider's own settings (programs/fake-provider.ts, and `npm start`, which starts one on
 * FAKE_PROVIDER_PORT). Its command-line flags win over these.
 */
export const FAKE_PROVIDER_SETTINGS = {
  host: {
    name: "FAKE_PROVIDER_HOST",
    alsoReads: ["HOST"],
    allowed: "a listen address",
    fallback: "HOST, else 127.0.0.1",
    read: (env: Env): string | undefined => env.FAKE_PROVIDER_HOST ?? env.HOST
  },
  port: {
    name: "FAKE_PROVIDER_PORT",
    alsoReads: ["PORT"],
    allowed: "a port number (0-65535)",
    fallback: "PORT, else 8788",
    read: (env: Env): number | undefined => optionalPort("FAKE_PROVIDER_PORT", env) ?? optionalPort("PORT", env)
  }
} satisfies Readonly<Record<string, Setting<unknown>>>

export type FakeProviderSettings = SettingsOf<typeof FAKE_PROVIDER_SETTINGS>
