/**
 * Settings of the local proxy (docs/proxy.md, docs/configuration.md) as one schema of the settings machinery
 * (../wire/config/setting.ts), read whole at start-up: from the environment, or from a JSON file named by PROXY_CONFIG
 * with the same settings under their keys in snake case (`host`, `port`, `gateway_url`, `gateway_key_file`,
 * `name_model`, ...). When both name a setting, the environment wins. A bad value is a ProxyStartError (reason
 * `invalid_setting`) whose message is one line naming the variable (and the file key it came from) and what is
 * allowed. Node-only (reads the file). There is deliberately no provider-URL setting: the proxy is gateway-locked.
 */
import { readFileSync } from "node:fs"
import { configDirSetting, homePathSetting, nameModelSetting, requiredGatewayUrlSetting } from "../client/clientSettings.ts"
import { expandHomePath } from "../client/homePath.ts"
import { ProxyStartError } from "../client/ProxyStartError.ts"
import { DEFAULT_FILE_LIMITS } from "../files/limits.ts"
import type { MediaPolicy } from "../tokeniser/tokeniseRequest.ts"
import { ConfigInvalid, custom, type Env, numberIn, oneOf, onOff, readSettings, readSettingsWithFallback, type SettingsOf, text } from "../wire/config/setting.ts"
import { DEFAULT_TOKENISE_TIMEOUT_MS } from "./proxyServer.ts"

export type { NameModelSetting } from "../client/clientSettings.ts"

export const DEFAULT_PROXY_HOST = "127.0.0.1"
export const DEFAULT_PROXY_PORT = 8799

/** Aliases on the embeddings route: `stable` (default; repeatable embeddings) or `per-request`. */
export type EmbeddingAliases = "stable" | "per-request"

/** PASSTHROUGH_PATHS: comma-separated JSON pointers (`*` for one segment) sent untokenised and declared. */
const passthroughPaths = custom(
  "PASSTHROUGH_PATHS",
  "a comma-separated list of JSON pointers to fields, such as /metadata/trace or /messages/*/x_tag",
  "empty",
  (raw, fail) => {
    const paths = (raw ?? "").split(",").map((p) => p.trim()).filter((p) => p !== "")
    for (const path of paths) if (!path.startsWith("/") || path === "/") fail(path)
    return paths
  }
)

/**
 * The settings a PROXY_CONFIG file may also give, each under its key in snake case (`gatewayKeyFile` is
 * `gateway_key_file`). Order is the order they are checked in.
 */
export const PROXY_SETTINGS = {
  host: custom("PROXY_HOST", "a listen address", DEFAULT_PROXY_HOST, (raw) => raw?.trim() || DEFAULT_PROXY_HOST),
  port: custom("PROXY_PORT", "a port number (0-65535; 0 picks a free port)", String(DEFAULT_PROXY_PORT), (raw, fail) => {
    const value = raw?.trim() ?? ""
    if (value === "") return DEFAULT_PROXY_PORT
    return /^[0-9]+$/.test(value) && Number(value) <= 65535 ? Number(value) : fail(raw)
  }),
  gatewayUrl: requiredGatewayUrlSetting,
  /** Read (present, mode 0600, holds a key) by readGatewayKeyFile before the proxy listens. */
  gatewayKeyFile: homePathSetting("GATEWAY_KEY_FILE", "required"),
  nameModel: nameModelSetting,
  embeddingAliases: oneOf("EMBEDDING_ALIASES", ["stable", "per-request"], "stable"),
  /** Time budget for tokenising one request. */
  tokeniseTimeoutMs: numberIn("TOKENISE_TIMEOUT_MS", { fallback: DEFAULT_TOKENISE_TIMEOUT_MS, min: 1, max: 3_600_000, unit: "milliseconds" }),
  /** `on` (default): `stream: true` streams; `off`: 501 `stream_not_supported` (the 0.3 behaviour). */
  streaming: onOff("PROXY_STREAMING", true),
  /** Largest attached file read and tokenised. */
  fileMaxBytes: numberIn("PROXY_FILE_MAX_BYTES", { fallback: DEFAULT_FILE_LIMITS.maxBytes, min: 1, max: 1_000_000_000, unit: "bytes" }),
  /** `refuse` (default), `redact` (images only) or `pass` (the egress policy's media opt-in). */
  mediaPolicy: oneOf("MEDIA_POLICY", ["refuse", "redact", "pass"] satisfies ReadonlyArray<MediaPolicy>, "refuse"),
  passthroughPaths
}

/** The settings only the environment gives: the file itself, and where the device's keys live. */
export const PROXY_ENVIRONMENT_SETTINGS = {
  config: text("PROXY_CONFIG"),
  configDir: configDirSetting
}

export type ProxySettings = SettingsOf<typeof PROXY_SETTINGS>

type FileKey = keyof typeof PROXY_SETTINGS
const snakeCase = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
const FILE_KEYS = new Map(Object.keys(PROXY_SETTINGS).map((key) => [snakeCase(key), key as FileKey]))
/** Keys whose value may be a JSON number in the file. */
const NUMERIC = new Set<FileKey>(["port", "tokeniseTimeoutMs", "fileMaxBytes"])

const readConfigFile = (path: string): Partial<Record<FileKey, string>> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new ProxyStartError(
      code === "ENOENT" ? `PROXY_CONFIG file ${path} does not exist.` : `PROXY_CONFIG file ${path} is not valid JSON.`
    )
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ProxyStartError(`PROXY_CONFIG file ${path} must hold a JSON object.`)
  }
  const out: Partial<Record<FileKey, string>> = {}
  for (const [key, value] of Object.entries(parsed)) {
    const setting = FILE_KEYS.get(key)
    // Unknown keys are errors, not ignored: a typo (or a hoped-for provider_url) must not pass silently.
    if (setting === undefined) {
      throw new ProxyStartError(
        `PROXY_CONFIG file ${path} has an unknown key "${key}"; the keys are ${[...FILE_KEYS.keys()].join(", ")} (there is no provider URL setting: the proxy only talks to a gateway).`
      )
    }
    const numeric = NUMERIC.has(setting)
    if (typeof value !== "string" && !(numeric && typeof value === "number")) {
      throw new ProxyStartError(`PROXY_CONFIG file ${path}: "${key}" must be a string${numeric ? " or a number" : ""}.`)
    }
    out[setting] = String(value)
  }
  return out
}

/** Every proxy setting, checked; throws ProxyStartError (`invalid_setting`) with one line on the first bad one. */
export const loadProxySettings = (env: Env): ProxySettings => {
  try {
    const { config } = readSettings(PROXY_ENVIRONMENT_SETTINGS, env)
    const path = config === undefined ? undefined : expandHomePath(config, "PROXY_CONFIG", env)
    const file = path === undefined ? {} : readConfigFile(path)
    return readSettingsWithFallback(PROXY_SETTINGS, env, file, (key) => `"${snakeCase(key)}" in the PROXY_CONFIG file ${path}`)
  } catch (error) {
    if (error instanceof ConfigInvalid) throw new ProxyStartError(error.message, "invalid_setting")
    throw error
  }
}
