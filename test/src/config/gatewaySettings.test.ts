// The gateway's settings schema: with nothing set every setting has the default it had before the schema (the values
// the layers used to compute from raw `env` reads); a bad value of any kind is one ConfigInvalid line naming the
// variable and what it allows, where it used to become NaN or a silent default.
import { describe, expect, it } from "vitest"
import { DEFAULT_TIER_LIMITS } from "../../../src/billing/limits.ts"
import { DEFAULT_RETRY_SCHEDULE_MS } from "../../../src/webhooks/schedule.ts"
import { FAKE_PROVIDER_SETTINGS, GATEWAY_SETTINGS, readGatewaySettings } from "../../../src/config/gatewaySettings.ts"
import { ConfigInvalid, readSettings } from "../../../sdks/typescript/src/wire/config/setting.ts"

const refusal = (env: Record<string, string>): string => {
  try {
    readGatewaySettings(env)
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigInvalid)
    return (e as Error).message
  }
  throw new Error(`accepted ${JSON.stringify(env)}`)
}

describe("gateway settings schema", () => {
  it("nothing set: the defaults the gateway has always had", () => {
    const s = readGatewaySettings({})
    expect(s).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      trustedProxies: [],
      shutdownGraceMs: 20_000,
      serverTiming: true,
      pgMaxConnections: 10,
      redisPrefix: "pr:",
      dataDir: "./.data",
      logLevel: "info",
      traceSampleRatio: 0.01,
      walletMirrorTtlMs: 10_000,
      providerCoolDownMs: 30_000,
      byokCacheTtlMs: 30_000,
      receiptKeyRotationCheckMs: 60_000,
      receiptKeysRefreshMs: 60_000,
      receiptChainVerifyMs: 60_000,
      transparencySequenceMs: 1000,
      retentionIntervalMs: 3_600_000,
      topupMinMicros: 5_000_000n,
      topupMaxMicros: 10_000_000_000n,
      lowBalanceThresholdMicros: 1_000_000n,
      webhookDispatcher: true,
      webhookPollMs: 200,
      webhookConcurrency: 16,
      webhookTimeoutMs: 8000,
      webhookAllowLoopback: false,
      emailVerificationTtlHours: 48,
      portalSessionTtlHours: 12,
      keyRotationCheckSeconds: 3600
    })
    for (const unset of ["publicBaseUrl", "databaseUrl", "redisUrl", "portalOrigin", "portalDir", "kekFile", "engineAllowlist", "retentionDays", "paymentsProvider", "smtpUrl", "mailFrom", "stripeSuccessUrl"] as const) {
      expect(s[unset], unset).toBeUndefined()
    }
    expect(s.rateLimits).toEqual(DEFAULT_TIER_LIMITS)
    expect(s.webhookRetryScheduleMs).toEqual(DEFAULT_RETRY_SCHEDULE_MS)
    expect(s.receiptKeyRotation).toMatchObject({ kind: "calendar", name: "quarterly" })
    expect(s.providerTimeoutsMs.size + s.providerBaseUrls.size + s.providerKeyFiles.size).toBe(0)
  })

  it("set values are read as the layers used to read them", () => {
    const s = readGatewaySettings({
      PROVIDER_COOLDOWN_MS: "0",
      WALLET_MIRROR_TTL_MS: "10",
      RETENTION_DAYS: "90",
      RETENTION_INTERVAL_MS: "0",
      TOPUP_MIN_USD: "1.50",
      WEBHOOK_DISPATCHER: "OFF",
      WEBHOOK_ALLOW_LOOPBACK: "1",
      PAYMENTS_PROVIDER: "dev",
      DATA_DIR: ":memory:",
      REDIS_PREFIX: "",
      PROVIDER_AZURE_OPENAI_BASE_URL: "https://contoso.openai.azure.com/",
      PROVIDER_OPENAI_TIMEOUT_MS: "2500",
      PROVIDER_GROQ_BASE_URL: "  ",
      EMAIL_VERIFICATION_TTL_HOURS: "0.5"
    })
    expect(s).toMatchObject({
      providerCoolDownMs: 0,
      walletMirrorTtlMs: 50,
      retentionDays: 90,
      retentionIntervalMs: 0,
      topupMinMicros: 1_500_000n,
      webhookDispatcher: false,
      webhookAllowLoopback: true,
      paymentsProvider: "dev",
      dataDir: undefined,
      redisPrefix: "",
      emailVerificationTtlHours: 0.5
    })
    expect([...s.providerBaseUrls]).toEqual([["AZURE_OPENAI", "https://contoso.openai.azure.com/"]])
    expect([...s.providerTimeoutsMs]).toEqual([["OPENAI", 2500]])
  })

  it.each([
    [{ PORT: "80a" }, "PORT must be a port number (0-65535)"],
    [{ PROVIDER_COOLDOWN_MS: "soon" }, "PROVIDER_COOLDOWN_MS must be a whole number of milliseconds, 0 or more, got \"soon\""],
    [{ PG_MAX_CONNECTIONS: "ten" }, "PG_MAX_CONNECTIONS must be a positive whole number, got \"ten\""],
    [{ EMAIL_VERIFICATION_TTL_HOURS: "48h" }, "EMAIL_VERIFICATION_TTL_HOURS must be a number of hours, 0 or more, got \"48h\""],
    [{ KEY_ROTATION_CHECK_SECONDS: "0" }, "KEY_ROTATION_CHECK_SECONDS must be a positive whole number of seconds, got \"0\""],
    [{ RECEIPT_CHAIN_VERIFY_MS: "-1" }, "RECEIPT_CHAIN_VERIFY_MS must be a whole number of milliseconds, 0 or more"],
    [{ RETENTION_DAYS: "0" }, "RETENTION_DAYS must be a whole number of days from 1 to 36500 (unset keeps everything)"],
    [{ RETENTION_DAYS: "30d" }, "RETENTION_DAYS must be"],
    [{ RETENTION_INTERVAL_MS: "-1" }, "RETENTION_INTERVAL_MS must be"],
    [{ SHUTDOWN_GRACE_MS: "600001" }, "SHUTDOWN_GRACE_MS must be a whole number of milliseconds from 0 to 600000"],
    [{ LOG_LEVEL: "verbose" }, "LOG_LEVEL must be one of debug, info, warn, error"],
    [{ SERVER_TIMING: "maybe" }, "SERVER_TIMING must be on or off"],
    [{ TRACE_SAMPLE_RATIO: "2" }, "TRACE_SAMPLE_RATIO must be a number between 0 and 1"],
    [{ TOPUP_MAX_USD: "0" }, "TOPUP_MAX_USD must be a positive decimal USD amount"],
    [{ LOW_BALANCE_THRESHOLD_USD: "one" }, "LOW_BALANCE_THRESHOLD_USD must be a decimal USD amount"],
    [{ PAYMENTS_PROVIDER: "stripe" }, "PAYMENTS_PROVIDER must be one of dev (or unset)"],
    [{ WEBHOOK_ALLOW_LOOPBACK: "yes" }, "WEBHOOK_ALLOW_LOOPBACK must be 1 (tests only) or unset"],
    [{ WEBHOOK_RETRY_SCHEDULE_MS: "1,2" }, "WEBHOOK_RETRY_SCHEDULE_MS must have 7 comma-separated entries"],
    [{ RATE_LIMITS_JSON: "{" }, "RATE_LIMITS_JSON: "],
    [{ ENGINE_ALLOWLIST_JSON: "{\"id\":1}" }, "ENGINE_ALLOWLIST_JSON must be a JSON array"],
    [{ RECEIPT_KEY_ROTATION: "weekly" }, "RECEIPT_KEY_ROTATION"],
    [{ PROVIDER_OPENAI_TIMEOUT_MS: "fast" }, "PROVIDER_OPENAI_TIMEOUT_MS must be a positive number of milliseconds"],
    [{ PROVIDER_OPENAI_BASE_URL: "api.openai.com" }, "PROVIDER_OPENAI_BASE_URL must be an http(s) origin"]
  ])("refuses %j: %s", (env, message) => {
    const line = refusal(env)
    expect(line).toContain(message)
    expect(line).not.toContain("\n")
  })

  it("never echoes a URL or file setting's value (it may hold a password)", () => {
    expect(refusal({ PROVIDER_OPENAI_BASE_URL: "s3cret" })).not.toContain("s3cret")
  })

  it("every setting says what it allows and what its default is", () => {
    for (const [key, setting] of Object.entries({ ...GATEWAY_SETTINGS, ...FAKE_PROVIDER_SETTINGS })) {
      expect(setting.allowed.length, key).toBeGreaterThan(3)
      expect(setting.fallback.length, key).toBeGreaterThan(0)
      expect(setting.name, key).toMatch(/^[A-Z][A-Z0-9_<>]+$/)
    }
  })

  it("fake provider: FAKE_PROVIDER_PORT, then PORT; a bad one names itself", () => {
    expect(readSettings(FAKE_PROVIDER_SETTINGS, {})).toEqual({ host: undefined, port: undefined })
    expect(readSettings(FAKE_PROVIDER_SETTINGS, { PORT: "9000", HOST: "::1" })).toEqual({ host: "::1", port: 9000 })
    expect(readSettings(FAKE_PROVIDER_SETTINGS, { FAKE_PROVIDER_PORT: "9001", PORT: "9000" }).port).toBe(9001)
    expect(() => readSettings(FAKE_PROVIDER_SETTINGS, { FAKE_PROVIDER_PORT: "x" })).toThrow("FAKE_PROVIDER_PORT must be a port number (0-65535)")
  })
})
