// Issue 32 item 1: `~` in a path setting names the home directory in every SDK and program. Settings reach the
// programs through JSON configs, process managers and SDK options, none of which expand `~` as a shell would, so a
// quickstart's `~/.config/privacy-relay/key` must work as written. `~user` forms are refused with a clear message.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest"
import { clientConfigDir } from "../../../sdks/typescript/src/client/deviceKey.ts"
import { readGatewayKeyFile } from "../../../sdks/typescript/src/client/gatewayKeyFile.ts"
import { expandHomePath } from "../../../sdks/typescript/src/client/homePath.ts"
import { RelayClient } from "../../../sdks/typescript/src/index.ts"
import { ConfigInvalid, parseGatewayConfig } from "../../../src/config/gatewayConfig.ts"
import { expandPathSettings } from "../../../src/config/homePath.ts"
import { readMcpSettings } from "../../../sdks/typescript/src/mcp/settings.ts"
import { readInput, toolPath } from "../../../sdks/typescript/src/mcp/tools/fileInput.ts"
import type { SessionContext } from "../../../sdks/typescript/src/mcp/context.ts"
import { loadProxySettings } from "../../../sdks/typescript/src/proxy/proxyConfig.ts"
import { readGatewayKeyFile as starterReadGatewayKeyFile } from "../../../starter-kit/gatewayKeyFile.ts"

const home = mkdtempSync(join(tmpdir(), "pr-home-"))
afterAll(() => rmSync(home, { recursive: true, force: true }))
const KEY = `svc_${"a".repeat(52)}`
mkdirSync(join(home, ".config/privacy-relay"), { recursive: true, mode: 0o700 })
writeFileSync(join(home, ".config/privacy-relay/key"), `${KEY}\n`, { mode: 0o600 })

// The SDK reads the key file when the client is made, with the process's HOME.
let savedHome: string | undefined
beforeEach(() => {
  savedHome = process.env.HOME
  process.env.HOME = home
})
afterEach(() => {
  process.env.HOME = savedHome
})

describe("~ in path settings", () => {
  it("TypeScript SDK: apiKeyFile '~/.config/privacy-relay/key' (the README's form) is read from the home directory", () => {
    expect(readGatewayKeyFile("~/.config/privacy-relay/key")).toBe(KEY)
    expect(() => new RelayClient({ gatewayUrl: "http://127.0.0.1:9", apiKeyFile: "~/.config/privacy-relay/key" })).not.toThrow()
    // A missing file names the path it looked at, expanded.
    expect(() => new RelayClient({ gatewayUrl: "http://127.0.0.1:9", apiKeyFile: "~/absent" })).toThrow(`Gateway key file ${join(home, "absent")} does not exist`)
  })

  it("TypeScript SDK: PRIVACY_RELAY_CONFIG_DIR and XDG_CONFIG_HOME may start with ~/", () => {
    expect(clientConfigDir({ HOME: home, PRIVACY_RELAY_CONFIG_DIR: "~/relay" })).toBe(join(home, "relay"))
    expect(clientConfigDir({ HOME: home, XDG_CONFIG_HOME: "~/cfg" })).toBe(join(home, "cfg/privacy-relay"))
    expect(clientConfigDir({ HOME: home, PRIVACY_RELAY_CONFIG_DIR: "~" })).toBe(home)
  })

  it("~user and paths that only start with a tilde-named directory are told apart", () => {
    expect(() => expandHomePath("~bob/key", "GATEWAY_KEY_FILE", { HOME: home })).toThrow("only ~ or ~/ (your home directory) is expanded, not ~user")
    expect(expandHomePath("./~/key", "GATEWAY_KEY_FILE", { HOME: home })).toBe("./~/key")
    expect(expandHomePath("/abs/key", "GATEWAY_KEY_FILE", { HOME: home })).toBe("/abs/key")
    expect(expandHomePath("rel/key", "GATEWAY_KEY_FILE", { HOME: home })).toBe("rel/key")
  })

  it("local proxy: PROXY_CONFIG and its gateway_key_file may start with ~/", () => {
    writeFileSync(join(home, "proxy.json"), JSON.stringify({ gateway_url: "https://gw.example.com", gateway_key_file: "~/.config/privacy-relay/key", port: 8800 }))
    const settings = loadProxySettings({ HOME: home, PROXY_CONFIG: "~/proxy.json" })
    expect(settings.port).toBe(8800)
    expect(readGatewayKeyFile(settings.gatewayKeyFile)).toBe(KEY)
  })

  it("MCP server: PORTAL_TOKEN_FILE, MCP_BEARER_TOKEN_FILE and MCP_RECEIPTS_FILE may start with ~/", () => {
    writeFileSync(join(home, "portal-token"), `spt_${"b".repeat(52)}\n`, { mode: 0o600 })
    writeFileSync(join(home, "bearer"), `${"c".repeat(40)}\n`, { mode: 0o600 })
    const settings = readMcpSettings({
      HOME: home,
      PORTAL_TOKEN_FILE: "~/portal-token",
      MCP_TRANSPORT: "http",
      MCP_HOST: "0.0.0.0",
      MCP_ALLOW_REMOTE: "1",
      MCP_BEARER_TOKEN_FILE: "~/bearer",
      MCP_RECEIPTS_FILE: "~/receipts.jsonl"
    })
    expect(settings.portalToken).toBe(`spt_${"b".repeat(52)}`)
    expect(settings.bearerToken).toBe("c".repeat(40))
    expect(settings.receiptsFile).toBe(join(home, "receipts.jsonl"))
    expect(readMcpSettings({ HOME: home, PRIVACY_RELAY_CONFIG_DIR: "~/relay" }).receiptsFile).toBe(join(home, "relay/mcp-receipts.jsonl"))
    expect(() => readMcpSettings({ HOME: home, PORTAL_TOKEN_FILE: "~bob/token" })).toThrow("not ~user")
  })

  it("MCP file tools: a path argument may start with ~/ (tokenise_file, reconstruct's path and original_path)", () => {
    writeFileSync(join(home, "notes.txt"), "hello")
    const session = { shared: { settings: { maxFileBytes: 1024 } } } as unknown as SessionContext
    expect(readInput({ path: "~/notes.txt" }, session)).toEqual({ filename: "notes.txt", bytes: Buffer.from("hello") })
    expect(toolPath("~/out.docx")).toBe(join(home, "out.docx"))
    expect(() => toolPath("~bob/out.docx")).toThrow("not ~user")
  })

  it("starter kit: GATEWAY_KEY_FILE may start with ~/", () => {
    expect(starterReadGatewayKeyFile("~/.config/privacy-relay/key")).toBe(KEY)
    expect(() => starterReadGatewayKeyFile("~/absent")).toThrow(`${join(home, "absent")} does not exist`)
  })

  it("gateway and operator CLI: every *_FILE and *_DIR setting may start with ~/ (one expansion before anything reads them)", () => {
    writeFileSync(join(home, "db-url"), "postgres://relay:pw@db.internal/relay\n", { mode: 0o600 })
    const config = parseGatewayConfig({
      HOME: home,
      DATABASE_URL_FILE: "~/db-url",
      DATA_DIR: "~/data",
      KEK_FILE: "~/kek",
      PROVIDER_OPENAI_API_KEY_FILE: "~/openai",
      METRICS_TOKEN_FILE: "~/metrics",
      PORTAL_DIR: "~",
      LOG_LEVEL: "info"
    })
    expect(config.databaseUrl).toBe("postgres://relay:pw@db.internal/relay")
    expect(config.dataDir).toBe(join(home, "data"))
    expect(config.kekFile).toBe(join(home, "kek"))
    // Layers read the other settings from config.env: already expanded there.
    expect(config.env.PROVIDER_OPENAI_API_KEY_FILE).toBe(join(home, "openai"))
    expect(config.env.METRICS_TOKEN_FILE).toBe(join(home, "metrics"))
    expect(config.env.PORTAL_DIR).toBe(home)
    expect(config.env.LOG_LEVEL).toBe("info")
    expect(() => parseGatewayConfig({ HOME: home, KEK_FILE: "~root/kek" })).toThrow(ConfigInvalid)
    // Values of other settings are never touched.
    expect(parseGatewayConfig({ HOME: home, PUBLIC_BASE_URL: "~odd" }).publicBaseUrl).toBe("~odd")
  })

  it("the gateway's path settings and the client's follow the same rule (the wire's)", () => {
    for (const value of ["~", "~/a/b", "/abs", "rel/x", "./~/x", "~bob/x"]) {
      let client: string
      try {
        client = expandHomePath(value, "X_FILE", { HOME: home })
      } catch {
        client = "refused"
      }
      let gateway: string
      try {
        gateway = expandPathSettings({ HOME: home, X_FILE: value }).X_FILE!
      } catch {
        gateway = "refused"
      }
      expect(gateway, value).toBe(client)
    }
  })
})
