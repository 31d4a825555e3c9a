/**
 * Every setting the gateway reads, parsed once from the environment (see docs/configuration.md).
 * Secrets are never here as values: only the paths of the files that hold them.
 *
 * No imports but node:fs and its own small helpers, on purpose: the operator CLI reads these settings (is there a database URL, where is the
 * data directory) before it decides whether it needs the gateway's modules at all, and loading `effect` alone takes
 * seconds on a busy machine.
 */
import { readFileSync } from "node:fs"
import { expandPathSettings } from "./homePath.ts"

export interface GatewayConfig {
  readonly host: string
  readonly port: number
  /** Receipt `iss`, OIDC issuer. */
  readonly publicBaseUrl: string
  readonly databaseUrl: string | undefined
  readonly redisUrl: string | undefined
  /** Prefix for every Redis key, so several gateways (or test runs) can share one Redis. */
  readonly redisPrefix: string
  /** Embedded storage directory; `undefined` keeps PGlite in memory (tests). */
  readonly dataDir: string | undefined
  readonly portalOrigin: string | undefined
  /** Honour X-Forwarded-For only when the socket peer is one of these addresses. */
  readonly trustedProxies: ReadonlyArray<string>
  readonly kekFile: string | undefined
  /**
   * KEK_PREVIOUS_FILE: the KEK in use before KEK_FILE's, during a KEK rotation. Values sealed under it keep opening;
   * nothing is sealed under it; `cli.ts kek rotate` re-seals them under KEK_FILE's key (docs/deployment.md).
   */
  readonly kekPreviousFile: string | undefined
  readonly logLevel: "debug" | "info" | "warn" | "error"
  readonly otlpEndpoint: string | undefined
  readonly traceSampleRatio: number
  /** SERVER_TIMING=off leaves out the Server-Timing header (default on: each response tells how long its stages took). */
  readonly serverTiming: boolean
  /**
   * SHUTDOWN_GRACE_MS: after SIGTERM/SIGINT, how long calls and streams already accepted may run on before they are
   * cut (then queued writes are flushed and the process exits). Shorter than the orchestrator's kill timeout.
   */
  readonly shutdownGraceMs: number
  readonly env: Readonly<Record<string, string | undefined>>
}

export class ConfigInvalid extends Error {
  readonly _tag = "ConfigInvalid"
}

const LOG_LEVELS = ["debug", "info", "warn", "error"] as const

export const parseGatewayConfig = (rawEnv: Readonly<Record<string, string | undefined>>): GatewayConfig => {
  // `~` in every *_FILE / *_DIR setting, once, so every layer that reads config.env sees the expanded path.
  const env = expandPathSettings(rawEnv, (message) => {
    throw new ConfigInvalid(message)
  })
  const host = env.HOST ?? "127.0.0.1"
  const port = parsePort(env.PORT ?? "8080", "PORT")
  const logLevel = (env.LOG_LEVEL ?? "info").toLowerCase()
  if (!LOG_LEVELS.includes(logLevel as any)) throw new ConfigInvalid(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`)
  const ratio = Number(env.TRACE_SAMPLE_RATIO ?? "0.01")
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigInvalid("TRACE_SAMPLE_RATIO must be a number between 0 and 1")
  return {
    host,
    port,
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`).replace(/\/+$/, ""),
    databaseUrl: valueOrFile(env, "DATABASE_URL"),
    redisUrl: valueOrFile(env, "REDIS_URL"),
    redisPrefix: env.REDIS_PREFIX ?? "pr:",
    dataDir: env.DATA_DIR === ":memory:" ? undefined : (nonEmpty(env.DATA_DIR) ?? "./.data"),
    portalOrigin: nonEmpty(env.PORTAL_ORIGIN),
    trustedProxies: (env.TRUSTED_PROXIES ?? "").split(",").map((s) => s.trim()).filter(Boolean),
    kekFile: nonEmpty(env.KEK_FILE),
    kekPreviousFile: nonEmpty(env.KEK_PREVIOUS_FILE),
    logLevel: logLevel as GatewayConfig["logLevel"],
    otlpEndpoint: nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT),
    traceSampleRatio: ratio,
    serverTiming: parseOnOff(env.SERVER_TIMING, "SERVER_TIMING", true),
    shutdownGraceMs: parseMillis(env.SHUTDOWN_GRACE_MS, "SHUTDOWN_GRACE_MS", 20_000, 600_000),
    env
  }
}

const parseOnOff = (raw: string | undefined, name: string, fallback: boolean): boolean => {
  const v = raw?.trim().toLowerCase()
  if (v === undefined || v === "") return fallback
  if (["on", "1", "true"].includes(v)) return true
  if (["off", "0", "false"].includes(v)) return false
  throw new ConfigInvalid(`${name} must be on or off`)
}

/**
 * A setting given either in the environment (`NAME`) or, for URLs that embed a password, in a file named by
 * `NAME_FILE` (a mounted secret, like the other *_FILE settings); both at once is a mistake, not a precedence rule.
 */
const valueOrFile = (env: Readonly<Record<string, string | undefined>>, name: string): string | undefined => {
  const file = nonEmpty(env[`${name}_FILE`])
  const value = nonEmpty(env[name])
  if (file === undefined) return value
  if (value !== undefined) throw new ConfigInvalid(`set ${name} or ${name}_FILE, not both`)
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (e) {
    throw new ConfigInvalid(`${name}_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? "error"})`)
  }
  const fromFile = nonEmpty(text)
  if (fromFile === undefined) throw new ConfigInvalid(`${name}_FILE: ${file} is empty`)
  return fromFile
}

const parseMillis = (raw: string | undefined, name: string, fallback: number, max: number): number => {
  const v = raw?.trim()
  if (v === undefined || v === "") return fallback
  const n = Number(v)
  if (!/^[0-9]+$/.test(v) || n > max) throw new ConfigInvalid(`${name} must be a whole number of milliseconds from 0 to ${max}`)
  return n
}

const nonEmpty = (s: string | undefined) => (s === undefined || s.trim() === "" ? undefined : s.trim())

const parsePort = (s: string, name: string) => {
  const n = Number(s)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigInvalid(`${name} must be a port number (0-65535)`)
  return n
}
