// The MCP server over Streamable HTTP (MCP_TRANSPORT=http) with the official client: sessions by Mcp-Session-Id, each
// with its own alias map (one session cannot restore another's originals), a private call through the gateway, a
// foreign Origin and a foreign Host refused, an unknown session 404, and no non-loopback bind without a setting.
import { spawnSync } from "node:child_process"
import { request } from "node:http"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { callFails, callOk, httpMcpClient, startHttpMcpServer, TOOL_NAMES } from "../support/mcpServer.ts"
import { useRelayFixture } from "../support/relayFixture.ts"
import { fundedKey } from "../support/tenant.ts"

const fx = useRelayFixture()
const dir = mkdtempSync(join(tmpdir(), "pr-mcp-http-"))
let server: Awaited<ReturnType<typeof startHttpMcpServer>>

const initialize = (headers: Record<string, string>) =>
  fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
  })

beforeAll(async () => {
  const key = await fundedKey(fx.gw)
  const keyFile = join(dir, "key")
  writeFileSync(keyFile, key.apiKey)
  chmodSync(keyFile, 0o600)
  server = await startHttpMcpServer({
    GATEWAY_URL: fx.gw.url,
    GATEWAY_KEY_FILE: keyFile,
    NAME_MODEL: "builtin",
    PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
    MCP_RECEIPTS_FILE: join(dir, "receipts.jsonl")
  })
})
afterAll(async () => {
  await server?.stop()
})

describe("MCP server over Streamable HTTP", () => {
  it("listens on 127.0.0.1 at /mcp and lists the 22 tools", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = await httpMcpClient(server.url)
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort())
    await client.close()
  })

  it("two sessions: each restores its own aliases, never the other's", async () => {
    const a = await httpMcpClient(server.url)
    const b = await httpMcpClient(server.url)
    const fromA = await callOk(a, "tokenise", { text: "Mail alice@example.org" })
    const fromB = await callOk(b, "tokenise", { text: "Mail bob@example.net" })
    await callFails(b, "detokenise", { text: fromA.text }, "unknown_alias")
    await callFails(a, "detokenise", { text: fromB.text }, "unknown_alias")
    await callFails(b, "reconstruct", { text: fromA.text, format: "txt" }, "unknown_alias")
    expect((await callOk(a, "detokenise", { text: fromA.text })).text).toBe("Mail alice@example.org")
    expect((await callOk(b, "detokenise", { text: fromB.text })).text).toBe("Mail bob@example.net")
    await a.close()
    await b.close()
  })

  it("private_completion over HTTP: the provider sees aliases only, the receipt verifies, its aliases stay in its session; bad input keeps the session", async () => {
    const client = await httpMcpClient(server.url)
    const other = await httpMcpClient(server.url)
    const result = await callOk(client, "private_completion", { model: "local-chat", messages: [{ role: "user", content: "Call +44 20 7946 0958" }] })
    expect(result.content).toBe("Echo: Call +44 20 7946 0958")
    expect(result.receipt_verified).toBe(true)
    expect(fx.provider.received.map((r) => r.body.toString("utf8")).join("")).not.toContain("7946")
    const sent: string = result.tokenised_request.messages[0].content
    expect(sent).toMatch(/^Call <PHONE_1_[0-9a-z]+>$/)
    expect((await callOk(client, "detokenise", { text: sent })).text).toBe("Call +44 20 7946 0958")
    await callFails(other, "detokenise", { text: sent }, "unknown_alias")
    await other.close()
    await callFails(client, "private_completion", { messages: "hi" }, "invalid_arguments")
    expect((await callOk(client, "meter")).calls).toBe(1)
    await client.close()
  })

  it("refuses a foreign Origin and a foreign Host (DNS rebinding); accepts a loopback Origin; 404s an unknown session", async () => {
    const foreign = await initialize({ origin: "https://evil.example" })
    expect(foreign.status).toBe(403)
    expect(JSON.stringify(await foreign.json())).toContain("origin_not_allowed")
    // fetch will not send a Host of our choosing; a DNS-rebound page's request carries its own site's name.
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(server.url, { method: "POST", headers: { host: "evil.example:9473", "content-type": "application/json" } }, (res) => {
        let body = ""
        res.on("data", (c) => (body += c))
        res.on("end", () => resolve({ status: res.statusCode!, body }))
      })
      req.on("error", reject)
      req.end("{}")
    })
    expect(rebound.status).toBe(403)
    expect(rebound.body).toContain("host_not_allowed")
    const local = await initialize({ origin: "http://localhost:3000" })
    expect(local.status).toBe(200)
    expect(local.headers.get("mcp-session-id")).toMatch(/^[0-9a-f-]{36}$/)
    await local.body?.cancel()
    const unknown = await fetch(server.url, { method: "POST", headers: { "mcp-session-id": "00000000-0000-0000-0000-000000000000", "content-type": "application/json" }, body: "{}" })
    expect(unknown.status).toBe(404)
  })

  it("will not bind a non-loopback address without MCP_ALLOW_REMOTE=1 and a bearer token file; a bad NAME_MODEL stops it", () => {
    const run = (env: Record<string, string>) =>
      spawnSync("node_modules/.bin/node", ["programs/mcp.ts"], { env: { ...process.env, MCP_TRANSPORT: "http", MCP_PORT: "0", ...env }, encoding: "utf8", timeout: 60_000 })
    const refused = run({ MCP_HOST: "0.0.0.0" })
    expect(refused.status).toBe(1)
    expect(JSON.parse(refused.stderr.trim())).toMatchObject({ level: "fatal", message: expect.stringContaining("MCP_ALLOW_REMOTE=1") })
    const noToken = run({ MCP_HOST: "0.0.0.0", MCP_ALLOW_REMOTE: "1" })
    expect(noToken.status).toBe(1)
    expect(noToken.stderr).toContain("MCP_BEARER_TOKEN_FILE")
    // The name model setting is checked at startup, though the engine itself loads later.
    const badNames = run({ NAME_MODEL: "spacy" })
    expect(badNames.status).toBe(1)
    expect(JSON.parse(badNames.stderr.trim())).toMatchObject({ level: "fatal", message: expect.stringContaining("NAME_MODEL") })
  })
})

describe("MCP server over Streamable HTTP with a bearer token (MCP_ALLOW_REMOTE=1)", () => {
  it("refuses requests without the token and serves those that carry it", async () => {
    const tokenFile = join(dir, "bearer")
    const token = "t".repeat(40)
    writeFileSync(tokenFile, token)
    chmodSync(tokenFile, 0o600)
    const remote = await startHttpMcpServer({ MCP_HOST: "0.0.0.0", MCP_ALLOW_REMOTE: "1", MCP_BEARER_TOKEN_FILE: tokenFile, MCP_RECEIPTS_FILE: join(dir, "r2.jsonl") })
    try {
      const url = remote.url.replace("0.0.0.0", "127.0.0.1")
      const bare = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      expect(bare.status).toBe(401)
      const authed = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
      })
      expect(authed.status).toBe(200)
      await authed.body?.cancel()
    } finally {
      await remote.stop()
    }
  })
})

describe("MCP server over Streamable HTTP: idle sessions", () => {
  it("closes a session idle longer than MCP_SESSION_IDLE_SECONDS (its aliases go with it): its id then answers 404", async () => {
    const idle = await startHttpMcpServer({ MCP_SESSION_IDLE_SECONDS: "1", MCP_RECEIPTS_FILE: join(dir, "r3.jsonl") })
    try {
      const init = await fetch(idle.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
      })
      expect(init.status).toBe(200)
      const id = init.headers.get("mcp-session-id")!
      await init.body?.cancel()
      const list = () =>
        fetch(idle.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })
        })
      const fresh = await list()
      expect(fresh.status).toBe(200)
      await fresh.body?.cancel()
      // The sweep runs every second; idle for more than 1 s plus one sweep.
      await new Promise((resolve) => setTimeout(resolve, 3000))
      const expired = await list()
      expect(expired.status).toBe(404)
      expect(JSON.stringify(await expired.json())).toContain("session_not_found")
    } finally {
      await idle.stop()
    }
  })
})
