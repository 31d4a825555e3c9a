/**
 * The MCP server's settings, from the environment and files only (secrets never on the command line). Every one is
 * listed in docs/configuration.md. A bad setting is a McpSettingsError whose message names the setting and the fix.
 */
import { readFileSync } from "node:fs"
import { isIP } from "node:net"
import { join } from "node:path"
import { clientConfigDir } from "../client/deviceKey.ts"
import { expandHomePath } from "../client/homePath.ts"
import { parseGatewayUrl } from "../client/gatewayUrl.ts"
import { ProxyStartError } from "../client/ProxyStartError.ts"
import { assertPrivateFile } from "../client/secretFile.ts"

export class McpSettingsError extends Error {}

export interface McpSettings {
  readonly transport: "stdio" | "http"
  readonly host: string
  readonly port: number
  /** Set only when MCP_ALLOW_REMOTE=1 (a non-loopback bind): every HTTP request must carry it as a bearer token. */
  readonly bearerToken: string | undefined
  readonly gatewayUrl: string | undefined
  readonly gatewayKeyFile: string | undefined
  readonly portalToken: string | undefined
  readonly nameModel: string
  readonly aliasMaxEntries: number
  readonly sessionIdleMs: number
  readonly maxSessions: number
  readonly maxFileBytes: number
  /** On-device OCR for tokenise_image (MCP_OCR=off turns it off: the tool then answers ocr_unavailable). */
  readonly ocr: {
    readonly enabled: boolean
    readonly timeoutMs: number
    /** Images whose header declares more pixels are refused before decoding (a decoded pixel costs 4 bytes or more). */
    readonly maxPixels: number
    readonly idleMs: number
  }
  /** Receipts received are appended here (they hold hashes and token counts, never content). */
  readonly receiptsFile: string
}

type Env = Readonly<Record<string, string | undefined>>

const integer = (env: Env, name: string, fallback: number, min: number, max: number): number => {
  const raw = env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) throw new McpSettingsError(`${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(raw)}.`)
  return value
}

export const isLoopbackHost = (host: string): boolean =>
  host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."))

/** A client-side setting error (ProxyStartError) as the MCP server's own. */
const asSettingsError = <A>(f: () => A): A => {
  try {
    return f()
  } catch (error) {
    throw new McpSettingsError(error instanceof ProxyStartError ? error.message : String(error))
  }
}

/** Reads a one-line secret from a file that only its owner can read (`~/` is the home directory). */
const readSecretFile = (env: Env, setting: string, settingName: string, pattern: RegExp, what: string): string => {
  const path = asSettingsError(() => {
    const path = expandHomePath(setting, settingName, env)
    assertPrivateFile(path, what, settingName)
    return path
  })
  const value = readFileSync(path, "utf8").trim()
  if (!pattern.test(value)) throw new McpSettingsError(`${what} ${path} (${settingName}) does not hold a ${what.toLowerCase()}.`)
  return value
}

export const readMcpSettings = (env: Env): McpSettings => {
  const transport = env.MCP_TRANSPORT ?? "stdio"
  if (transport !== "stdio" && transport !== "http") throw new McpSettingsError(`MCP_TRANSPORT must be "stdio" or "http", not ${JSON.stringify(transport)}.`)
  const host = env.MCP_HOST || "127.0.0.1"
  const allowRemote = env.MCP_ALLOW_REMOTE === "1"
  let bearerToken: string | undefined
  if (transport === "http" && !isLoopbackHost(host)) {
    if (!allowRemote) {
      throw new McpSettingsError(`MCP_HOST ${host} is not a loopback address: the MCP server serves this device only. Set MCP_ALLOW_REMOTE=1 and MCP_BEARER_TOKEN_FILE to serve other machines.`)
    }
    if (!env.MCP_BEARER_TOKEN_FILE) throw new McpSettingsError("MCP_ALLOW_REMOTE=1 needs MCP_BEARER_TOKEN_FILE: a file (mode 0600) holding the bearer token clients must send.")
    bearerToken = readSecretFile(env, env.MCP_BEARER_TOKEN_FILE, "MCP_BEARER_TOKEN_FILE", /^\S{32,}$/, "Bearer token file")
  }
  const ocr = env.MCP_OCR || "on"
  if (ocr !== "on" && ocr !== "off") throw new McpSettingsError(`MCP_OCR must be "on" or "off", not ${JSON.stringify(ocr)}.`)
  const nameModel = env.NAME_MODEL || "builtin"
  if (nameModel !== "builtin" && nameModel !== "compromise" && nameModel !== "off" && !/^https?:\/\/\S+$/.test(nameModel)) {
    throw new McpSettingsError(`NAME_MODEL must be "builtin", "compromise", "off" or the http(s) URL of a name model service, not ${JSON.stringify(nameModel)}.`)
  }
  return {
    transport,
    host,
    port: integer(env, "MCP_PORT", 9473, 0, 65535),
    bearerToken,
    // Checked now (https, or http to loopback; no credentials) so a mistyped URL stops the server at start; whether it is
    // a gateway is asked on first use (the on-device tools work without one).
    gatewayUrl: env.GATEWAY_URL ? asSettingsError(() => parseGatewayUrl(env.GATEWAY_URL)) : undefined,
    gatewayKeyFile: env.GATEWAY_KEY_FILE || undefined,
    portalToken: env.PORTAL_TOKEN_FILE ? readSecretFile(env, env.PORTAL_TOKEN_FILE, "PORTAL_TOKEN_FILE", /^spt_\S+$/, "Portal token file") : undefined,
    nameModel,
    aliasMaxEntries: integer(env, "MCP_ALIAS_MAX", 10_000, 1, 10_000_000),
    sessionIdleMs: integer(env, "MCP_SESSION_IDLE_SECONDS", 1800, 1, 604_800) * 1000,
    maxSessions: integer(env, "MCP_MAX_SESSIONS", 100, 1, 100_000),
    maxFileBytes: integer(env, "MCP_MAX_FILE_BYTES", 5 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    ocr: {
      enabled: ocr === "on",
      timeoutMs: integer(env, "MCP_OCR_TIMEOUT_SECONDS", 60, 1, 3600) * 1000,
      maxPixels: integer(env, "MCP_OCR_MAX_PIXELS", 20_000_000, 1, 200_000_000),
      idleMs: integer(env, "MCP_OCR_IDLE_SECONDS", 300, 1, 86_400) * 1000
    },
    receiptsFile: asSettingsError(() => env.MCP_RECEIPTS_FILE ? expandHomePath(env.MCP_RECEIPTS_FILE, "MCP_RECEIPTS_FILE", env) : join(clientConfigDir(env), "mcp-receipts.jsonl"))
  }
}
