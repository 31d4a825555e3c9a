// The package's programs as a user runs them: `npm pack` of the SDK installed into an empty folder (no workspace, no
// gateway code), then `npx privacy-relay proxy | mcp | demo` on the machine's own Node against a real gateway on
// 127.0.0.1, and the MCP host lines of docs/mcp.md (`npx -y @privacy-relay/sdk mcp`, and today's form for the
// tarball) answered by the official MCP client.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { TOOL_NAMES } from "../../support/mcpServer.ts"
import { withSdkPackLock } from "../../support/sdkPackLock.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()
const repo = join(import.meta.dirname, "..", "..", "..")
/** What only the gateway needs: none of it may be anywhere in the installed tree. */
const GATEWAY_ONLY = ["@electric-sql/pglite", "@effect/sql-pg", "ioredis", "oidc-provider", "stripe", "nodemailer", "@effect/platform-node"]

/** The machine's own node (not the project's pinned one), so the programs are proven on what users have. */
const systemNode = () => {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node"]) if (existsSync(candidate)) return candidate
  return execFileSync("bash", ["-lc", "command -v node"], { encoding: "utf8" }).trim()
}

/** Every package directory under a node_modules tree, at any depth, as its package name. */
const installedPackages = (nodeModules: string): Array<string> =>
  readdirSync(nodeModules, { withFileTypes: true }).flatMap((entry) => {
    if (!entry.isDirectory() || entry.name.startsWith(".")) return []
    const names = entry.name.startsWith("@")
      ? readdirSync(join(nodeModules, entry.name), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => `${entry.name}/${d.name}`)
      : [entry.name]
    return names.flatMap((name) => {
      const nested = join(nodeModules, name, "node_modules")
      return [name, ...(existsSync(nested) ? installedPackages(nested) : [])]
    })
  })

let out: string
let app: string
let tarball: string
let env: Record<string, string>
const children: Array<ChildProcess> = []

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), "pr-programs-pack-"))
  const packed = JSON.parse(withSdkPackLock(() => execFileSync("npm", ["pack", "--workspace", "@privacy-relay/sdk", "--pack-destination", out, "--json"], { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })))
  tarball = join(out, packed[0].filename)
  app = mkdtempSync(join(tmpdir(), "pr-programs-app-"))
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  execFileSync("npm", ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline"], { cwd: app, stdio: ["ignore", "ignore", "inherit"] })
  const { apiKey } = await fundedKey(fx.gw)
  writeFileSync(join(app, "gateway-key"), `${apiKey}\n`, { mode: 0o600 })
  env = {
    // The system Node first: `npx` and the bin's `#!/usr/bin/env node` run on it.
    PATH: `${dirname(systemNode())}:${process.env.PATH}`,
    HOME: app,
    // npm's own cache (the packages this install already fetched), not one under the temporary HOME.
    npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? "/root", ".npm"),
    PRIVACY_RELAY_CONFIG_DIR: join(app, "config"),
    GATEWAY_URL: fx.gw.url,
    GATEWAY_KEY_FILE: join(app, "gateway-key"),
    NAME_MODEL: "off"
  }
}, 300_000)

afterAll(() => {
  // npx runs the bin under a shell: stop the whole group each test started.
  // The whole group even when npx itself has exited: a program it left behind keeps the group alive.
  for (const child of children) {
    try {
      process.kill(-child.pid!, "SIGKILL")
    } catch {
      // The group is gone already.
    }
  }
  rmSync(out, { recursive: true, force: true })
  rmSync(app, { recursive: true, force: true })
})

/** `npx privacy-relay proxy` from the app folder, in its own process group, and the URL it prints once listening. */
const startPackedProxy = async (): Promise<{ proxy: ChildProcess; url: string }> => {
  const proxy = spawn("npx", ["privacy-relay", "proxy"], { cwd: app, env: { ...env, PROXY_PORT: "0" }, stdio: ["ignore", "pipe", "pipe"], detached: true })
  children.push(proxy)
  let stdout = ""
  let stderr = ""
  proxy.stderr!.on("data", (chunk) => (stderr += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    proxy.stdout!.on("data", (chunk) => {
      stdout += chunk
      const m = /"url":"([^"]+)"/.exec(stdout)
      if (m !== null) resolve(m[1]!)
    })
    proxy.once("exit", (code) => reject(new Error(`the proxy exited ${code}: ${stderr}`)))
  })
  return { proxy, url }
}

describe("the packed @privacy-relay/sdk runs its programs on its own", () => {
  it("its installed tree holds no gateway dependency, at any depth, and no gateway code", () => {
    const installed = installedPackages(join(app, "node_modules"))
    expect(installed).toContain("@privacy-relay/sdk")
    expect(installed).toContain("@modelcontextprotocol/sdk")
    expect(installed.filter((name) => GATEWAY_ONLY.includes(name))).toEqual([])
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter(Boolean)
    expect(files).toContain("package/dist/cli.js")
    expect(files).toContain("package/dist/proxy-worker.js")
    expect(files.filter((f) => /\.ts$/.test(f) && !f.endsWith(".d.ts"))).toEqual([])
  })

  it("`npx privacy-relay proxy` listens and relays a chat call: the answer has the original back, the provider saw only aliases", async () => {
    const { proxy, url } = await startPackedProxy()
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    fx.provider.reset()
    // Enough text for a worker thread (the proxy tokenises large bodies off its own thread: dist/proxy-worker.js).
    const filler = "The quarterly figures are attached for review. ".repeat(2_000)
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: `Write to ada@example.org. ${filler}` }] })
    })
    expect(res.status).toBe(200)
    const answer = (await res.json()) as { choices: Array<{ message: { content: string } }> }
    expect(answer.choices[0]!.message.content).toContain("Echo: Write to ada@example.org.")
    expect(res.headers.get("x-service-receipt-v2")).not.toBeNull()
    expect(fx.provider.received).toHaveLength(1)
    const upstream = fx.provider.received[0]!.body.toString()
    expect(upstream).not.toContain("ada@example.org")
    expect(upstream).toMatch(/<EMAIL_1_[0-9a-z]+>/)
    const models = await fetch(`${url}/v1/models`)
    expect(models.status).toBe(200)
    expect(models.headers.get("x-proxy-models-source")).toBe("gateway")
    process.kill(-proxy.pid!, "SIGTERM")
    await new Promise((resolve) => (proxy.exitCode === null ? proxy.once("exit", resolve) : resolve(undefined)))
  }, 120_000)

  // npx runs the bin as `sh -c "privacy-relay proxy"` and passes SIGTERM to that shell only, which dies without passing
  // it on: the proxy kept running and kept its port. A process manager, `timeout` or `kill <pid>` signals npx alone.
  it("`npx privacy-relay proxy` stops when SIGTERM reaches npx alone: every process gone and the port free within 10 s", async () => {
    const { proxy, url } = await startPackedProxy()
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    const groupAlive = () => {
      try {
        process.kill(-proxy.pid!, 0)
        return true
      } catch {
        return false
      }
    }
    const signalled = Date.now()
    process.kill(proxy.pid!, "SIGTERM")
    while (groupAlive() && Date.now() - signalled < 10_000) await new Promise((resolve) => setTimeout(resolve, 50))
    const survivors = groupAlive() ? execFileSync("ps", ["-o", "pid,ppid,stat,cmd", "-g", String(proxy.pid)], { encoding: "utf8" }) : ""
    expect(survivors).toBe("")
    expect(Date.now() - signalled).toBeLessThan(10_000)
    await expect(fetch(`${url}/healthz`)).rejects.toThrow()
  }, 120_000)

  it("`npx privacy-relay mcp` (stdio, as an MCP host starts it) stops when SIGTERM reaches npx alone, though the host keeps its pipe open", async () => {
    const mcp = spawn("npx", ["privacy-relay", "mcp"], { cwd: app, env, stdio: ["pipe", "pipe", "pipe"], detached: true })
    children.push(mcp)
    let stdout = ""
    const initialised = new Promise<void>((resolve, reject) => {
      mcp.stdout!.on("data", (chunk) => {
        stdout += chunk
        if (stdout.includes('"serverInfo"')) resolve()
      })
      mcp.once("exit", (code) => reject(new Error(`the MCP server exited ${code}`)))
    })
    mcp.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } } })}\n`)
    await initialised
    const groupAlive = () => {
      try {
        process.kill(-mcp.pid!, 0)
        return true
      } catch {
        return false
      }
    }
    const signalled = Date.now()
    process.kill(mcp.pid!, "SIGTERM")
    while (groupAlive() && Date.now() - signalled < 10_000) await new Promise((resolve) => setTimeout(resolve, 50))
    const survivors = groupAlive() ? execFileSync("ps", ["-o", "pid,ppid,stat,cmd", "-g", String(mcp.pid)], { encoding: "utf8" }) : ""
    expect(survivors).toBe("")
    // This side never closed the pipe: the stop came from the signal to npx alone.
    expect(mcp.stdin!.writableEnded).toBe(false)
    mcp.stdin!.destroy()
  }, 120_000)

  it("a bad setting or an argument stops `proxy` and `mcp` at start: exit 1, one line naming the setting and what it accepts", async () => {
    const run = (args: Array<string>, extra: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(join(app, "node_modules", ".bin", "privacy-relay"), args, { cwd: app, env: { ...env, ...extra } }, (error, _out, stderr) =>
          resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, stderr })
        )
        child.stdin!.end()
      })
    const oneLine = (stderr: string) => {
      const lines = stderr.trim().split("\n")
      expect(lines).toHaveLength(1)
      return JSON.parse(lines[0]!) as Record<string, any>
    }
    const argument = await run(["proxy", "--port", "9000"], {})
    expect(argument.code).toBe(1)
    expect(oneLine(argument.stderr)).toMatchObject({ level: "FATAL", annotations: { event: "startup_failed", reason: "invalid_setting" }, message: expect.stringContaining("takes no command-line arguments") })
    const port = await run(["proxy"], { PROXY_PORT: "abc" })
    expect(port.code).toBe(1)
    expect(oneLine(port.stderr)).toMatchObject({ level: "FATAL", message: 'privacy-relay proxy: PROXY_PORT must be a port number (0-65535; 0 picks a free port), got "abc"' })
    const transport = await run(["mcp"], { MCP_TRANSPORT: "carrier-pigeon" })
    expect(transport.code).toBe(1)
    expect(oneLine(transport.stderr)).toMatchObject({ level: "fatal", reason: "invalid_setting", message: 'MCP_TRANSPORT must be one of stdio, http, got "carrier-pigeon"' })
  }, 60_000)

  it("the MCP host line `npx -y @privacy-relay/sdk mcp` answers initialize and lists the 22 tools (official MCP client)", async () => {
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(new StdioClientTransport({ command: "npx", args: ["-y", "@privacy-relay/sdk", "mcp"], cwd: app, env, stderr: "pipe" }))
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "privacy-relay", version: "0.4.0" })
      const tools = await client.listTools()
      expect(tools.tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort())
      const tokenised = await client.callTool({ name: "tokenise", arguments: { text: "Mail ada@example.org" } })
      expect(tokenised.isError).toBeFalsy()
      expect((tokenised.structuredContent as { text: string }).text).toMatch(/^Mail <EMAIL_1_[0-9a-z]+>$/)
      fx.provider.reset()
      const completion = await client.callTool({ name: "private_completion", arguments: { model: "local-chat", messages: [{ role: "user", content: "Write to bob@example.org" }] } })
      expect(completion.isError).toBeFalsy()
      expect(JSON.stringify(completion.structuredContent)).toContain("Echo: Write to bob@example.org")
      expect(fx.provider.received.map((r) => r.body.toString()).join("")).not.toContain("bob@example.org")
    } finally {
      await client.close()
    }
  }, 180_000)

  it("the host line for the tarball itself, `npx -y --package=<tarball> privacy-relay mcp`, works from an empty folder", async () => {
    const empty = mkdtempSync(join(tmpdir(), "pr-programs-empty-"))
    const client = new Client({ name: "test", version: "1.0.0" })
    try {
      // npx installs the tarball's dependencies from the registry before the server can answer initialize: on a loaded
      // machine that outlasted the MCP client's default 60 s request timeout, so the first request gets the test's budget.
      await client.connect(new StdioClientTransport({ command: "npx", args: ["-y", `--package=${tarball}`, "privacy-relay", "mcp"], cwd: empty, env: { ...env, HOME: empty }, stderr: "pipe" }), { timeout: 200_000 })
      expect(client.getServerVersion()).toMatchObject({ name: "privacy-relay", version: "0.4.0" })
      const tools = await client.listTools()
      expect(tools.tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort())
    } finally {
      await client.close()
      rmSync(empty, { recursive: true, force: true })
      // npx installed the tarball into npm's cache under a name of its own: remove that install, not the cache.
      const npxDir = join(env.npm_config_cache!, "_npx")
      for (const entry of existsSync(npxDir) ? readdirSync(npxDir) : []) {
        const manifest = join(npxDir, entry, "package.json")
        if (existsSync(manifest) && readFileSync(manifest, "utf8").includes(tarball)) rmSync(join(npxDir, entry), { recursive: true, force: true })
      }
    }
  }, 240_000)

  it("`npx privacy-relay demo` chats with an anonymous demo key, showing what left the device", async () => {
    fx.provider.reset()
    const demo = await new Promise<string>((resolve, reject) => {
      const child = execFile("npx", ["privacy-relay", "demo"], { cwd: app, env }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)))
      child.stdin!.end("Write to ada@example.org\n")
    })
    expect(demo).toMatch(/left this device> Write to <EMAIL_1_[0-9a-z]+>\n/)
    expect(demo).toContain("answer> Echo: Write to ada@example.org\n")
    expect(fx.provider.received.map((r) => r.body.toString()).join("")).not.toContain("ada@example.org")
  }, 120_000)

  it("`npx privacy-relay --help` names the proxy, mcp and demo commands", async () => {
    const help = execFileSync("npx", ["privacy-relay", "--help"], { cwd: app, env, encoding: "utf8" })
    for (const command of ["proxy", "mcp", "demo"]) expect(help).toMatch(new RegExp(`^  ${command} `, "m"))
  }, 60_000)
})

