/**
 * The MCP server's settings, from the environment and files only (secrets never on the command line), as one schema of
 * the settings machinery (../wire/config/setting.ts) read whole at start-up. Every one is listed in
 * docs/configuration.md (test/docs/configurationSchema.test.ts). A bad setting is a McpSettingsError whose message is
 * one line naming the setting and what is allowed.
 */
import { readFileSync } from "node:fs"
import { isIP } from "node:net"
import { join } from "node:path"
import { configDirSetting, gatewayUrlSetting, homePathSetting, nameModelOption, nameModelSetting } from "../client/clientSettings.ts"
import { assertPrivateFile } from "../client/secretFile.ts"
import { ProxyStartError } from "../client/ProxyStartError.ts"
import { ConfigInvalid, type Env, numberIn, oneOf, onOff, port, readSettings, text } from "../wire/config/setting.ts"

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

export const MCP_SETTINGS = {
  transport: oneOf("MCP_TRANSPORT", ["stdio", "http"], "stdio"),
  host: text("MCP_HOST", "127.0.0.1"),
  port: port("MCP_PORT", 9473),
  allowRemote: onOff("MCP_ALLOW_REMOTE", false),
  bearerTokenFile: homePathSetting("MCP_BEARER_TOKEN_FILE"),
  // Whether it is a gateway is asked on first use (the on-device tools work without one).
  gatewayUrl: gatewayUrlSetting(),
  gatewayKeyFile: text("GATEWAY_KEY_FILE"),
  portalTokenFile: homePathSetting("PORTAL_TOKEN_FILE"),
  nameModel: nameModelSetting,
  aliasMaxEntries: numberIn("MCP_ALIAS_MAX", { fallback: 10_000, min: 1, max: 10_000_000 }),
  sessionIdleSeconds: numberIn("MCP_SESSION_IDLE_SECONDS", { fallback: 1800, min: 1, max: 604_800, unit: "seconds" }),
  maxSessions: numberIn("MCP_MAX_SESSIONS", { fallback: 100, min: 1, max: 100_000 }),
  maxFileBytes: numberIn("MCP_MAX_FILE_BYTES", { fallback: 5 * 1024 * 1024, min: 1, max: 1024 * 1024 * 1024, unit: "bytes" }),
  ocr: onOff("MCP_OCR", true),
  ocrTimeoutSeconds: numberIn("MCP_OCR_TIMEOUT_SECONDS", { fallback: 60, min: 1, max: 3600, unit: "seconds" }),
  ocrMaxPixels: numberIn("MCP_OCR_MAX_PIXELS", { fallback: 20_000_000, min: 1, max: 200_000_000, unit: "pixels" }),
  ocrIdleSeconds: numberIn("MCP_OCR_IDLE_SECONDS", { fallback: 300, min: 1, max: 86_400, unit: "seconds" }),
  receiptsFile: homePathSetting("MCP_RECEIPTS_FILE", "mcp-receipts.jsonl in PRIVACY_RELAY_CONFIG_DIR"),
  configDir: configDirSetting
}

export const isLoopbackHost = (host: string): boolean =>
  host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."))

/** Reads a one-line secret from a file that only its owner can read (the path already has `~` expanded). */
const readSecretFile = (path: string, settingName: string, pattern: RegExp, what: string): string => {
  try {
    assertPrivateFile(path, what, settingName)
  } catch (error) {
    throw new McpSettingsError(error instanceof ProxyStartError ? error.message : String(error))
  }
  const value = readFileSync(path, "utf8").trim()
  if (!pattern.test(value)) throw new McpSettingsError(`${what} ${path} (${settingName}) does not hold a ${what.toLowerCase()}.`)
  return value
}

const readSchema = (env: Env) => {
  try {
    return readSettings(MCP_SETTINGS, env)
  } catch (error) {
    if (error instanceof ConfigInvalid) throw new McpSettingsError(error.message)
    throw error
  }
}

export const readMcpSettings = (env: Env): McpSettings => {
  const s = readSchema(env)
  const host = s.host ?? "127.0.0.1"
  let bearerToken: string | undefined
  if (s.transport === "http" && !isLoopbackHost(host)) {
    if (!s.allowRemote) {
      throw new McpSettingsError(`MCP_HOST ${host} is not a loopback address: the MCP server serves this device only. Set MCP_ALLOW_REMOTE=1 and MCP_BEARER_TOKEN_FILE to serve other machines.`)
    }
    if (s.bearerTokenFile === undefined) throw new McpSettingsError("MCP_ALLOW_REMOTE=1 needs MCP_BEARER_TOKEN_FILE: a file (mode 0600) holding the bearer token clients must send.")
    bearerToken = readSecretFile(s.bearerTokenFile, "MCP_BEARER_TOKEN_FILE", /^\S{32,}$/, "Bearer token file")
  }
  return {
    transport: s.transport,
    host,
    port: s.port,
    bearerToken,
    gatewayUrl: s.gatewayUrl,
    gatewayKeyFile: s.gatewayKeyFile,
    portalToken: s.portalTokenFile === undefined ? undefined : readSecretFile(s.portalTokenFile, "PORTAL_TOKEN_FILE", /^spt_\S+$/, "Portal token file"),
    nameModel: nameModelOption(s.nameModel),
    aliasMaxEntries: s.aliasMaxEntries,
    sessionIdleMs: s.sessionIdleSeconds * 1000,
    maxSessions: s.maxSessions,
    maxFileBytes: s.maxFileBytes,
    ocr: {
      enabled: s.ocr,
      timeoutMs: s.ocrTimeoutSeconds * 1000,
      maxPixels: s.ocrMaxPixels,
      idleMs: s.ocrIdleSeconds * 1000
    },
    receiptsFile: s.receiptsFile ?? join(s.configDir, "mcp-receipts.jsonl")
  }
}
