// starter-kit/server.ts without a browser: what it refuses, and that a refusal forwards nothing. The gateway here is
// a recording hop in front of a real gateway, so "nothing forwarded" is observed, not assumed.
import { spawn } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { StarterConfigError } from "../../starter-kit/gatewayKeyFile.ts"
import { type StarterServer, startStarterServer } from "../../starter-kit/server.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { type RecordingProxy, startRecordingProxy } from "../support/recordingProxy.ts"
import { fundedKey } from "../support/tenant.ts"

const work = mkdtempSync(join(tmpdir(), "starter-server-test-"))
const appDir = join(work, "app")
let gw: TestGateway
let hop: RecordingProxy
let server: StarterServer
let apiKey: string
let keyFile: string

beforeAll(async () => {
  mkdirSync(join(appDir, "assets"), { recursive: true })
  writeFileSync(join(appDir, "index.html"), "<!doctype html><title>app</title>")
  writeFileSync(join(appDir, "assets", "app.js"), "export {}")
  writeFileSync(join(work, "secret.txt"), "outside the app")
  gw = await startTestGateway()
  hop = await startRecordingProxy(gw.url)
  apiKey = (await fundedKey(gw)).apiKey
  keyFile = join(work, "key")
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 })
  server = await startStarterServer({ gatewayUrl: hop.url, keyFile, appDir, port: 0, log: () => {}, maxBodyBytes: 64 * 1024 })
})

afterAll(async () => {
  await server?.close()
  await hop?.close()
  await gw?.close()
  rmSync(work, { recursive: true, force: true })
})

const post = (path: string, headers: Record<string, string>, body = '{"model":"local-chat","messages":[{"role":"user","content":"hi ada@example.org"}]}') =>
  fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })

const ATTESTED = { "x-service-engine": "relay-ts/0.4.0", "x-service-attestation": "e30" }

describe("the starter kit's server", () => {
  it("refuses a call without the engine's attestation, and forwards nothing", async () => {
    hop.requests.length = 0
    const res = await post("/api/v1/chat/completions", {})
    expect(res.status).toBe(400)
    expect((await res.json()).error.code).toBe("not_tokenised")
    expect(hop.requests).toEqual([])
  })

  it("refuses a call from another site (Origin or Sec-Fetch-Site), and forwards nothing", async () => {
    hop.requests.length = 0
    const foreign = await post("/api/v1/chat/completions", { ...ATTESTED, origin: "https://evil.example" })
    expect(foreign.status).toBe(403)
    expect((await foreign.json()).error.code).toBe("cross_origin_refused")
    const crossSite = await fetch(`${server.url}/api/v1/models`, { headers: { "sec-fetch-site": "cross-site" } })
    expect(crossSite.status).toBe(403)
    expect(hop.requests).toEqual([])
  })

  it("refuses a body over the limit with 413, and forwards nothing", async () => {
    hop.requests.length = 0
    const res = await post("/api/v1/chat/completions", ATTESTED, JSON.stringify({ text: "x".repeat(100 * 1024) }))
    expect(res.status).toBe(413)
    expect((await res.json()).error.code).toBe("payload_too_large")
    expect(hop.requests).toEqual([])
  })

  it("forwards an attested call with the key added and passes the gateway's refusal back (a forged attestation: 428, nothing relayed)", async () => {
    hop.requests.length = 0
    const res = await post("/api/v1/chat/completions", { ...ATTESTED, origin: server.url, cookie: "session=1" })
    expect(res.status).toBe(428)
    expect((await res.json()).error.code).toBe("pretokenised_required")
    expect(res.headers.get("x-request-id")).toBeTruthy()
    expect(hop.requests).toHaveLength(1)
    expect(hop.requests[0]!.headers.authorization).toBe(`Bearer ${apiKey}`)
    expect(hop.requests[0]!.headers.cookie).toBeUndefined()
    expect(hop.requests[0]!.headers.origin).toBeUndefined()
  })

  it("forwards only the chat routes, the model list and the receipt keys", async () => {
    hop.requests.length = 0
    for (const path of ["/api/v1/keys", "/api/v1/embeddings", "/api/v1/billing/balance", "/api/v1/self/balance"]) {
      const res = await fetch(`${server.url}${path}`)
      expect(res.status, path).toBe(404)
    }
    expect(hop.requests).toEqual([])
    const jwks = await fetch(`${server.url}/api/.well-known/service-receipt-pubkeys.jwks`)
    expect(jwks.status).toBe(200)
    expect((await jwks.json()).keys.length).toBeGreaterThan(0)
    expect(hop.requests[0]!.headers.authorization).toBeUndefined()
    const models = await fetch(`${server.url}/api/v1/models`)
    expect(models.status).toBe(200)
    expect((await models.json()).data.some((m: { id: string }) => m.id === "local-chat")).toBe(true)
  })

  it("answers only to its own host names (a rebound DNS name gets 421, nothing forwarded), and needs them named on a non-loopback address", async () => {
    hop.requests.length = 0
    const { request } = await import("node:http")
    const url = new URL(server.url)
    const status = (host: string, path: string, method = "GET") =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path, method, headers: { host, "content-type": "application/json", ...ATTESTED } }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on("error", reject)
        req.end(method === "POST" ? "{}" : undefined)
      })
    expect(await status(`attacker.example:${url.port}`, "/")).toBe(421)
    expect(await status(`attacker.example:${url.port}`, "/api/v1/chat/completions", "POST")).toBe(421)
    expect(await status(`attacker.example:${url.port}`, "/api/v1/models")).toBe(421)
    expect(hop.requests).toEqual([])
    expect(await status(`localhost:${url.port}`, "/")).toBe(200)
    await expect(startStarterServer({ gatewayUrl: hop.url, keyFile, appDir, port: 0, host: "0.0.0.0" })).rejects.toThrow(/STARTER_ALLOWED_HOSTS/)
  })

  it("serves the app with a strict content security policy and nothing outside it", async () => {
    const page = await fetch(`${server.url}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'")
    expect(await page.text()).toContain("<title>app</title>")
    expect((await fetch(`${server.url}/assets/app.js`)).headers.get("cache-control")).toContain("immutable")
    for (const path of ["/../secret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt"]) {
      const res = await fetch(`${server.url}${path}`)
      expect(res.status, path).toBe(404)
      expect(await res.text()).not.toContain("outside the app")
    }
  })

  it("will not start with a key file other users can read, a missing key file, or a plain-http remote gateway", async () => {
    const loose = join(work, "loose-key")
    writeFileSync(loose, `${apiKey}\n`)
    chmodSync(loose, 0o644)
    await expect(startStarterServer({ gatewayUrl: hop.url, keyFile: loose, appDir, port: 0 })).rejects.toThrow(/readable by other users/)
    await expect(startStarterServer({ gatewayUrl: hop.url, keyFile: join(work, "none"), appDir, port: 0 })).rejects.toBeInstanceOf(StarterConfigError)
    await expect(startStarterServer({ gatewayUrl: "http://relay.example", keyFile, appDir, port: 0 })).rejects.toThrow(/plain http to a non-loopback host/)
    const errors = await Promise.allSettled([startStarterServer({ gatewayUrl: hop.url, keyFile: loose, appDir, port: 0 })])
    expect(JSON.stringify(errors)).not.toContain(apiKey)
  })

  it("runs as a program: GATEWAY_URL and GATEWAY_KEY_FILE from the environment, one line saying where it listens; a bad setting exits 1 with the reason", async () => {
    const program = join(import.meta.dirname, "..", "..", "starter-kit", "server.ts")
    const run = (env: Record<string, string>, until: RegExp) =>
      new Promise<{ code: number | null; out: string; child: ReturnType<typeof spawn> }>((resolve) => {
        const child = spawn(process.execPath, ["--conditions=privacy-relay-repo", program], { env: { PATH: process.env.PATH ?? "", STARTER_PORT: "0", STARTER_APP_DIR: appDir, ...env } })
        let out = ""
        const check = (chunk: Buffer) => {
          out += chunk.toString("utf8")
          if (until.test(out)) resolve({ code: null, out, child })
        }
        child.stdout.on("data", check)
        child.stderr.on("data", check)
        child.on("exit", (code) => resolve({ code, out, child }))
      })
    const started = await run({ GATEWAY_URL: hop.url, GATEWAY_KEY_FILE: keyFile }, /listening/)
    try {
      const line = JSON.parse(started.out.trim().split("\n")[0]!) as { url: string }
      expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect((await fetch(`${line.url}/`)).status).toBe(200)
      expect(started.out).not.toContain(apiKey)
    } finally {
      started.child.kill("SIGTERM")
    }
    const refused = await run({ GATEWAY_URL: hop.url }, /$^/)
    expect(refused.code).toBe(1)
    expect(refused.out).toContain("GATEWAY_KEY_FILE is not set")
  })
})
