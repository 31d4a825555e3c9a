/**
 * Settings of the local proxy (docs/proxy.md, docs/configuration.md), from the environment or a JSON file named by
 * PROXY_CONFIG with the same keys in snake case: `host`, `port`, `gateway_url`, `gateway_key_file`,
 * `name_model`, `embedding_aliases`, `media_policy`, `passthrough_paths`, ... When both name a setting, the environment wins. Node-only (reads the file).
 * There is deliberately no provider-URL setting: the proxy is gateway-locked.
 */
import { readFileSync } from "node:fs"
import { expandHomePath } from "../client/homePath.ts"
import { ProxyStartError } from "../client/ProxyStartError.ts"
import type { MediaPolicy } from "../tokeniser/tokeniseRequest.ts"

export const DEFAULT_PROXY_HOST = "127.0.0.1"
export const DEFAULT_PROXY_PORT = 8799

export type NameModelSetting =
  | { readonly kind: "builtin" }
  | { readonly kind: "compromise" }
  | { readonly kind: "off" }
  | { readonly kind: "http"; readonly url: string }

export interface ProxySettings {
  readonly host: string
  readonly port: number
  /** Raw; checked by parseGatewayUrl. */
  readonly gatewayUrl: string | undefined
  readonly gatewayKeyFile: string | undefined
  readonly nameModel: NameModelSetting
  /** Aliases on the embeddings route: `stable` (default; repeatable embeddings) or `per-request`. */
  readonly embeddingAliases: EmbeddingAliases
  /** Time budget for tokenising one request; undefined: the server's default. */
  readonly tokeniseTimeoutMs: number | undefined
  /** `on` (default): `stream: true` streams; `off`: 501 `stream_not_supported` (the 0.3 behaviour). */
  readonly streaming: boolean
  /** Largest attached file read and tokenised (PROXY_FILE_MAX_BYTES); undefined: the default, 20 MB. */
  readonly fileMaxBytes: number | undefined
  /** MEDIA_POLICY: `refuse` (default), `redact` (images only) or `pass` (the egress policy's media opt-in). */
  readonly mediaPolicy: MediaPolicy
  /** PASSTHROUGH_PATHS: comma-separated JSON pointers (`*` for one segment) sent untokenised and declared. */
  readonly passthroughPaths: ReadonlyArray<string>
}

export type EmbeddingAliases = "stable" | "per-request"

const FILE_KEYS = [
  "host",
  "port",
  "gateway_url",
  "gateway_key_file",
  "name_model",
  "embedding_aliases",
  "tokenise_timeout_ms",
  "streaming",
  "file_max_bytes",
  "media_policy",
  "passthrough_paths"
] as const
type FileKey = (typeof FILE_KEYS)[number]

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
    // Unknown keys are errors, not ignored: a typo (or a hoped-for provider_url) must not pass silently.
    if (!(FILE_KEYS as ReadonlyArray<string>).includes(key)) {
      throw new ProxyStartError(
        `PROXY_CONFIG file ${path} has an unknown key "${key}"; the keys are ${FILE_KEYS.join(", ")} (there is no provider URL setting: the proxy only talks to a gateway).`
      )
    }
    const numeric = key === "port" || key === "tokenise_timeout_ms" || key === "file_max_bytes"
    if (typeof value !== "string" && !(numeric && typeof value === "number")) {
      throw new ProxyStartError(`PROXY_CONFIG file ${path}: "${key}" must be a string${numeric ? " or a number" : ""}.`)
    }
    out[key as FileKey] = String(value)
  }
  return out
}

const parsePort = (raw: string): number => {
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ProxyStartError(`PROXY_PORT ${JSON.stringify(raw)} is not a port number (0-65535; 0 picks a free port).`)
  }
  return Number(raw)
}

const parseTimeout = (raw: string): number => {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 3_600_000) {
    throw new ProxyStartError(`TOKENISE_TIMEOUT_MS ${JSON.stringify(raw)} must be a whole number of milliseconds between 1 and 3600000.`)
  }
  return Number(raw)
}

const parseFileMaxBytes = (raw: string): number => {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 1_000_000_000) {
    throw new ProxyStartError(`PROXY_FILE_MAX_BYTES ${JSON.stringify(raw)} must be a whole number of bytes between 1 and 1000000000.`)
  }
  return Number(raw)
}

/** `builtin` (default), `compromise` (the built-in model plus the compromise library), `off`, or an http(s) URL of a name-model endpoint. */
export const parseNameModelSetting = (raw: string | undefined): NameModelSetting => {
  const value = raw?.trim() ?? ""
  if (value === "" || value === "builtin") return { kind: "builtin" }
  if (value === "off") return { kind: "off" }
  if (value === "compromise") return { kind: "compromise" }
  if (/^https?:\/\//i.test(value)) {
    try {
      return { kind: "http", url: new URL(value).toString() }
    } catch {
      // fall through to the error below
    }
  }
  throw new ProxyStartError(`NAME_MODEL ${JSON.stringify(value)} must be builtin, compromise, off, or an http(s) URL of a name-model endpoint.`)
}

/** PROXY_STREAMING: `on` (default) or `off`. */
export const parseStreaming = (raw: string | undefined): boolean => {
  const value = raw?.trim() ?? ""
  if (value === "" || value === "on") return true
  if (value === "off") return false
  throw new ProxyStartError(`PROXY_STREAMING ${JSON.stringify(value)} must be on or off.`)
}

/** MEDIA_POLICY: `refuse` (default), `redact` or `pass`. */
export const parseMediaPolicy = (raw: string | undefined): MediaPolicy => {
  const value = raw?.trim() ?? ""
  if (value === "") return "refuse"
  if (value === "refuse" || value === "redact" || value === "pass") return value
  throw new ProxyStartError(`MEDIA_POLICY ${JSON.stringify(value)} must be refuse, redact or pass.`)
}

/** PASSTHROUGH_PATHS: comma-separated JSON pointers, each starting with "/" (a `*` segment matches any one segment). */
export const parsePassthroughPaths = (raw: string | undefined): ReadonlyArray<string> => {
  const paths = (raw ?? "").split(",").map((p) => p.trim()).filter((p) => p !== "")
  for (const path of paths) {
    if (!path.startsWith("/") || path === "/") {
      throw new ProxyStartError(`PASSTHROUGH_PATHS entry ${JSON.stringify(path)} must be a JSON pointer to a field, such as /metadata/trace or /messages/*/x_tag.`)
    }
  }
  return paths
}

/** `stable` (default) or `per-request`. */
export const parseEmbeddingAliases = (raw: string | undefined): EmbeddingAliases => {
  const value = raw?.trim() ?? ""
  if (value === "" || value === "stable") return "stable"
  if (value === "per-request") return "per-request"
  throw new ProxyStartError(`EMBEDDING_ALIASES ${JSON.stringify(value)} must be stable or per-request.`)
}

export const loadProxySettings = (env: Readonly<Record<string, string | undefined>>): ProxySettings => {
  const file = env.PROXY_CONFIG ? readConfigFile(expandHomePath(env.PROXY_CONFIG, "PROXY_CONFIG", env)) : {}
  const pick = (envName: string, fileKey: FileKey): string | undefined => {
    const fromEnv = env[envName]
    return fromEnv !== undefined && fromEnv !== "" ? fromEnv : file[fileKey]
  }
  const port = pick("PROXY_PORT", "port")
  const tokeniseTimeout = pick("TOKENISE_TIMEOUT_MS", "tokenise_timeout_ms")
  const fileMaxBytes = pick("PROXY_FILE_MAX_BYTES", "file_max_bytes")
  return {
    host: pick("PROXY_HOST", "host") ?? DEFAULT_PROXY_HOST,
    port: port === undefined ? DEFAULT_PROXY_PORT : parsePort(port),
    gatewayUrl: pick("GATEWAY_URL", "gateway_url"),
    gatewayKeyFile: pick("GATEWAY_KEY_FILE", "gateway_key_file"),
    nameModel: parseNameModelSetting(pick("NAME_MODEL", "name_model")),
    embeddingAliases: parseEmbeddingAliases(pick("EMBEDDING_ALIASES", "embedding_aliases")),
    tokeniseTimeoutMs: tokeniseTimeout === undefined ? undefined : parseTimeout(tokeniseTimeout),
    streaming: parseStreaming(pick("PROXY_STREAMING", "streaming")),
    fileMaxBytes: fileMaxBytes === undefined ? undefined : parseFileMaxBytes(fileMaxBytes),
    mediaPolicy: parseMediaPolicy(pick("MEDIA_POLICY", "media_policy")),
    passthroughPaths: parsePassthroughPaths(pick("PASSTHROUGH_PATHS", "passthrough_paths"))
  }
}
