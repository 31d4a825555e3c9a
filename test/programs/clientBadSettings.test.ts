// Issue 33 item 3, the client programs: a bad setting stops `programs/proxy.ts`, `programs/mcp.ts`, `programs/demo.ts`,
// the package's bin (`privacy-relay proxy | mcp | demo`, sdks/typescript/src/cli.ts) and the starter kit's server
// (`starter-kit/server.ts`, and `npm run starter`'s start.ts before it builds the app) at start, with a non-zero exit
// status and exactly one line on stderr naming the setting and what is allowed, and nothing started. "Nothing
// started" is observed, not inferred: every child runs with a preload that records each `listen` call of Node's net
// module and each child process to a file (test/support/runWithStartProbe.ts), and the demo's gateway is a server here
// that counts requests.
// One case per kind of setting: number, enum, on/off, URL, path, list, and a bad value from a PROXY_CONFIG file.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runWithStartProbe, START_PROBE, type StartProbeRun } from "../support/runWithStartProbe.ts"

const ROOT = join(import.meta.dirname, "../..")
const dir = mkdtempSync(join(tmpdir(), "pr-client-settings-"))
const keyFile = join(dir, "gateway-key")
writeFileSync(keyFile, `svc_${"a".repeat(52)}\n`, { mode: 0o600 })

// The demo's gateway: a bad setting must stop the demo before it asks anything.
let gatewayRequests = 0
const gateway = createServer((_, res) => {
  gatewayRequests++
  res.statusCode = 503
  res.end()
})
let gatewayUrl: string
beforeAll(async () => {
  await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve))
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise((resolve) => gateway.close(resolve))
  rmSync(dir, { recursive: true, force: true })
})

/** `node <args>` with `env` under the start probe, until it exits; the SDK's config folder is one of the test's own. */
const run = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  runWithStartProbe(args, { PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"), ...env }, dir)

const PROXY = ["programs/proxy.ts"]
const MCP = ["programs/mcp.ts"]
const DEMO = ["programs/demo.ts"]
const BIN = (command: string) => ["sdks/typescript/src/cli.ts", command]
/** The starter kit imports the SDK's wire entry by package name; in this repository that is the source (package.json). */
const STARTER = ["--conditions=privacy-relay-repo", "starter-kit/server.ts"]
const STARTER_COMMAND = ["--conditions=privacy-relay-repo", "starter-kit/start.ts"]
/** What every proxy run would need to start: a syntactically good gateway (never asked: settings are checked first). */
const PROXY_ENV = { GATEWAY_URL: "http://127.0.0.1:9", GATEWAY_KEY_FILE: keyFile, PROXY_PORT: "0", NAME_MODEL: "off" }
/** The MCP server over HTTP, so a start would be a listen. */
const MCP_ENV = { MCP_TRANSPORT: "http", MCP_PORT: "0", NAME_MODEL: "off" }

/** The proxy's one FATAL line: the message names the setting and what is allowed; the reason is invalid_setting. */
const expectProxyRefusal = (stopped: StartProbeRun, message: string) => {
  expect(stopped.code).toBe(1)
  expect(stopped.stderrLines).toHaveLength(1)
  expect(JSON.parse(stopped.stderrLines[0]!)).toMatchObject({
    level: "FATAL",
    message: `privacy-relay proxy: ${message}`,
    annotations: { event: "startup_failed", reason: "invalid_setting" }
  })
  expect(stopped.stdout).toBe("")
  expect(stopped.started).toEqual([])
}

const expectMcpRefusal = (stopped: StartProbeRun, message: string) => {
  expect(stopped.code).toBe(1)
  expect(stopped.stderrLines).toHaveLength(1)
  expect(JSON.parse(stopped.stderrLines[0]!)).toMatchObject({ level: "fatal", program: "mcp", reason: "invalid_setting", message })
  expect(stopped.stdout).toBe("")
  expect(stopped.started).toEqual([])
}

/** The starter kit server's log format: one JSON line on stderr, exit status 1. */
const expectStarterRefusal = (stopped: StartProbeRun, message: string) => {
  expect(stopped.code).toBe(1)
  expect(stopped.stderrLines).toHaveLength(1)
  expect(JSON.parse(stopped.stderrLines[0]!)).toEqual({ level: "error", msg: message })
  expect(stopped.stdout).toBe("")
  expect(stopped.started).toEqual([])
}

const expectDemoRefusal = (stopped: StartProbeRun, message: string) => {
  expect(stopped.code).toBe(2)
  expect(stopped.stderrLines).toEqual([`privacy-relay demo: ${message}`])
  expect(stopped.stdout).toBe("")
  expect(stopped.started).toEqual([])
}

describe("the probe sees a listen (so an empty record means nothing listened)", () => {
  it("the MCP server with good settings listens, and the probe records it", async () => {
    const child = spawn(process.execPath, ["--import", START_PROBE, ...MCP], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: dir, PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"), LISTEN_PROBE_FILE: join(dir, "listen-good.log"), ...MCP_ENV, MCP_OCR: "off" },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on("data", (chunk) => {
        stderr += chunk
        if (stderr.includes("MCP server listening")) resolve()
      })
      child.once("exit", (code) => reject(new Error(`the MCP server exited ${code}: ${stderr}`)))
    })
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await exited
    expect(readFileSync(join(dir, "listen-good.log"), "utf8")).toMatch(/^listen 0 127\.0\.0\.1/m)
  }, 60_000)
})

describe("local proxy (programs/proxy.ts): a bad setting stops it before it listens", () => {
  it("number: TOKENISE_TIMEOUT_MS=0", async () => {
    expectProxyRefusal(await run(PROXY, { ...PROXY_ENV, TOKENISE_TIMEOUT_MS: "0" }), 'TOKENISE_TIMEOUT_MS must be a whole number of milliseconds from 1 to 3600000, got "0"')
  }, 60_000)

  it("port: PROXY_PORT=abc", async () => {
    expectProxyRefusal(await run(PROXY, { ...PROXY_ENV, PROXY_PORT: "abc" }), 'PROXY_PORT must be a port number (0-65535; 0 picks a free port), got "abc"')
  }, 60_000)

  it("enum: MEDIA_POLICY=blur", async () => {
    expectProxyRefusal(await run(PROXY, { ...PROXY_ENV, MEDIA_POLICY: "blur" }), 'MEDIA_POLICY must be one of refuse, redact, pass, got "blur"')
  }, 60_000)

  it("on/off: PROXY_STREAMING=maybe", async () => {
    expectProxyRefusal(await run(PROXY, { ...PROXY_ENV, PROXY_STREAMING: "maybe" }), 'PROXY_STREAMING must be on or off, got "maybe"')
  }, 60_000)

  it("URL: GATEWAY_URL=ftp://gateway.example.com", async () => {
    expectProxyRefusal(await run(PROXY, { ...PROXY_ENV, GATEWAY_URL: "ftp://gateway.example.com" }), "GATEWAY_URL must be an https URL, not ftp:")
  }, 60_000)

  it("path: GATEWAY_KEY_FILE=~bob/key", async () => {
    expectProxyRefusal(
      await run(PROXY, { ...PROXY_ENV, GATEWAY_KEY_FILE: "~bob/key" }),
      "GATEWAY_KEY_FILE ~bob/key: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path."
    )
  }, 60_000)

  it("list: PASSTHROUGH_PATHS with an entry that is not a JSON pointer", async () => {
    expectProxyRefusal(
      await run(PROXY, { ...PROXY_ENV, PASSTHROUGH_PATHS: "/metadata/trace,metadata.user" }),
      'PASSTHROUGH_PATHS must be a comma-separated list of JSON pointers to fields, such as /metadata/trace or /messages/*/x_tag, got "metadata.user"'
    )
  }, 60_000)

  it("a bad value in the PROXY_CONFIG file names the variable, the key and the file", async () => {
    const config = join(dir, "proxy.json")
    writeFileSync(config, JSON.stringify({ file_max_bytes: "20MB" }))
    expectProxyRefusal(
      await run(PROXY, { ...PROXY_ENV, PROXY_CONFIG: config }),
      `PROXY_FILE_MAX_BYTES must be a whole number of bytes from 1 to 1000000000, got "20MB" ("file_max_bytes" in the PROXY_CONFIG file ${config})`
    )
  }, 60_000)
})

describe("MCP server (programs/mcp.ts): a bad setting stops it before it serves", () => {
  it("number: MCP_MAX_SESSIONS=0", async () => {
    expectMcpRefusal(await run(MCP, { ...MCP_ENV, MCP_MAX_SESSIONS: "0" }), 'MCP_MAX_SESSIONS must be a whole number from 1 to 100000, got "0"')
  }, 60_000)

  it("enum: MCP_TRANSPORT=carrier-pigeon", async () => {
    expectMcpRefusal(await run(MCP, { ...MCP_ENV, MCP_TRANSPORT: "carrier-pigeon" }), 'MCP_TRANSPORT must be one of stdio, http, got "carrier-pigeon"')
  }, 60_000)

  it("on/off: MCP_OCR=maybe", async () => {
    expectMcpRefusal(await run(MCP, { ...MCP_ENV, MCP_OCR: "maybe" }), 'MCP_OCR must be on or off, got "maybe"')
  }, 60_000)

  it("URL: GATEWAY_URL=http://gateway.example.com (plain http to another host)", async () => {
    const stopped = await run(MCP, { ...MCP_ENV, GATEWAY_URL: "http://gateway.example.com" })
    expectMcpRefusal(stopped, expect.stringMatching(/^GATEWAY_URL http:\/\/gateway\.example\.com is plain http to a non-loopback host/) as unknown as string)
  }, 60_000)

  it("path: MCP_RECEIPTS_FILE=~bob/receipts.jsonl", async () => {
    expectMcpRefusal(
      await run(MCP, { ...MCP_ENV, MCP_RECEIPTS_FILE: "~bob/receipts.jsonl" }),
      "MCP_RECEIPTS_FILE ~bob/receipts.jsonl: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path."
    )
  }, 60_000)

  it("in stdio mode too (what an MCP host starts): NAME_MODEL=spacy", async () => {
    expectMcpRefusal(await run(MCP, { NAME_MODEL: "spacy" }), 'NAME_MODEL must be builtin, compromise, off, or an http(s) URL of a name-model endpoint, got "spacy"')
  }, 60_000)
})

describe("demo (programs/demo.ts): a bad setting stops it before it asks the gateway anything", () => {
  it("enum: NAME_MODEL=spacy, and the gateway was never asked", async () => {
    gatewayRequests = 0
    expectDemoRefusal(await run(DEMO, { GATEWAY_URL: gatewayUrl, NAME_MODEL: "spacy" }), 'NAME_MODEL must be builtin, compromise, off, or an http(s) URL of a name-model endpoint, got "spacy"')
    expect(gatewayRequests).toBe(0)
  }, 60_000)

  it("URL: GATEWAY_URL with credentials", async () => {
    expectDemoRefusal(await run(DEMO, { GATEWAY_URL: "https://user:pw@gateway.example.com" }), "GATEWAY_URL must not carry credentials; the gateway key comes from GATEWAY_KEY_FILE.")
  }, 60_000)
})

describe("the package's bin (privacy-relay proxy | mcp | demo): the same refusals", () => {
  it("privacy-relay proxy, MEDIA_POLICY=blur", async () => {
    expectProxyRefusal(await run(BIN("proxy"), { ...PROXY_ENV, MEDIA_POLICY: "blur" }), 'MEDIA_POLICY must be one of refuse, redact, pass, got "blur"')
  }, 60_000)

  it("privacy-relay mcp, MCP_PORT=80a", async () => {
    expectMcpRefusal(await run(BIN("mcp"), { ...MCP_ENV, MCP_PORT: "80a" }), 'MCP_PORT must be a port number (0-65535), got "80a"')
  }, 60_000)

  it("privacy-relay demo, NAME_MODEL=spacy", async () => {
    gatewayRequests = 0
    expectDemoRefusal(await run(BIN("demo"), { GATEWAY_URL: gatewayUrl, NAME_MODEL: "spacy" }), 'NAME_MODEL must be builtin, compromise, off, or an http(s) URL of a name-model endpoint, got "spacy"')
    expect(gatewayRequests).toBe(0)
  }, 60_000)
})

describe("starter kit (starter-kit/server.ts, npm run starter): a bad setting stops it before it listens", () => {
  /** Everything else good: the key file (mode 0600) and a gateway URL that is never asked. */
  const STARTER_ENV = { GATEWAY_URL: "http://127.0.0.1:9", GATEWAY_KEY_FILE: keyFile, STARTER_APP_DIR: join(dir, "app") }

  it("port: STARTER_PORT=abc (it was Number(\"abc\"), a NaN port)", async () => {
    expectStarterRefusal(await run(STARTER, { ...STARTER_ENV, STARTER_PORT: "abc" }), 'STARTER_PORT must be a port number (0-65535), got "abc"')
  }, 60_000)

  it("list: STARTER_ALLOWED_HOSTS with a URL instead of a host name", async () => {
    expectStarterRefusal(
      await run(STARTER, { ...STARTER_ENV, STARTER_ALLOWED_HOSTS: "chat.example.com,https://chat.example.com" }),
      "STARTER_ALLOWED_HOSTS must be a comma-separated list of host names (no scheme, port or path)"
    )
  }, 60_000)

  it("URL: GATEWAY_URL=http://relay.example (plain http to another host)", async () => {
    expectStarterRefusal(
      await run(STARTER, { ...STARTER_ENV, GATEWAY_URL: "http://relay.example" }),
      "GATEWAY_URL http://relay.example is plain http to a non-loopback host; a gateway must be reached over https (plain http is allowed only to 127.0.0.1/localhost for development)."
    )
  }, 60_000)

  it("path: STARTER_APP_DIR=~bob/app", async () => {
    expectStarterRefusal(
      await run(STARTER, { ...STARTER_ENV, STARTER_APP_DIR: "~bob/app" }),
      "STARTER_APP_DIR ~bob/app: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path."
    )
  }, 60_000)

  it("npm run starter's command refuses STARTER_PORT=70000 before it builds the app: the app folder is never written", async () => {
    const appDir = join(dir, "never-built")
    expectStarterRefusal(await run(STARTER_COMMAND, { ...STARTER_ENV, STARTER_APP_DIR: appDir, STARTER_PORT: "70000" }), 'STARTER_PORT must be a port number (0-65535), got "70000"')
    expect(existsSync(appDir)).toBe(false)
  }, 60_000)
})
