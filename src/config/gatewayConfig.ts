/**
 * Every setting the gateway reads, parsed once from the environment by the schema in gatewaySettings.ts (see
 * docs/configuration.md).
 * Secrets are never here as values: only the paths of the files that hold them.
 *
 * No imports but pure modules (node:fs and the setting schema), on purpose: the operator CLI reads these settings (is there a database URL, where is the
 * data directory) before it decides whether it needs the gateway's modules at all, and loading `effect` alone takes
 * seconds on a busy machine.
 */
import { type GatewaySettings, readGatewaySettings } from "./gatewaySettings.ts"
import { expandPathSettings } from "./homePath.ts"
import { ConfigInvalid } from "../../sdks/typescript/src/wire/config/setting.ts"

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
  /** Every setting of the schema (src/config/gatewaySettings.ts), parsed and validated at start-up. */
  readonly settings: GatewaySettings
  /** The environment with `~` expanded in path settings: only for what the schema reads (provider origins). */
  readonly env: Readonly<Record<string, string | undefined>>
}

export { ConfigInvalid }

export const parseGatewayConfig = (rawEnv: Readonly<Record<string, string | undefined>>): GatewayConfig => {
  // `~` in every *_FILE / *_DIR setting, once, so every setting naming a path sees the expanded path.
  const env = expandPathSettings(rawEnv)
  const settings = readGatewaySettings(env)
  const { host, port } = settings
  return {
    host,
    port,
    publicBaseUrl: (settings.publicBaseUrl ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`).replace(/\/+$/, ""),
    databaseUrl: settings.databaseUrl,
    redisUrl: settings.redisUrl,
    redisPrefix: settings.redisPrefix,
    dataDir: settings.dataDir,
    portalOrigin: settings.portalOrigin,
    trustedProxies: settings.trustedProxies,
    kekFile: settings.kekFile,
    kekPreviousFile: settings.kekPreviousFile,
    logLevel: settings.logLevel,
    otlpEndpoint: settings.otlpEndpoint,
    traceSampleRatio: settings.traceSampleRatio,
    serverTiming: settings.serverTiming,
    shutdownGraceMs: settings.shutdownGraceMs,
    settings,
    env
  }
}
