import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { attestedHeaders } from "../support/engine.ts"
import { useRelayFixture } from "../support/relayFixture.ts"
import { fundedKey } from "../support/tenant.ts"

const NGINX = "/usr/sbin/nginx"
const DEPLOY = join(import.meta.dirname, "../../deploy/nginx")

/** `text` with `from` replaced by `to`, failing when `from` does not occur exactly once (the shipped file changed). */
const replaceOnce = (text: string, from: string, to: string) => {
  expect(text.split(from).length - 1, `expected exactly one ${JSON.stringify(from)}`).toBe(1)
  return text.replace(from, to)
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/**
 * The shipped deploy/nginx files in a temporary prefix: nginx.conf as shipped except its include directory, pid
 * and logs; privacy-relay.conf as shipped except its listen line (a free loopback port); upstream.conf as shipped
 * except the compose host names (the test gateway's loopback address).
 */
const stageNginx = (listenPort: number, gatewayAddress: string) => {
  const prefix = mkdtempSync(join(tmpdir(), "pr-nginx-"))
  mkdirSync(join(prefix, "logs"))
  mkdirSync(join(prefix, "conf"))
  let main = readFileSync(join(DEPLOY, "nginx.conf"), "utf8")
  main = replaceOnce(main, "pid /tmp/nginx.pid;", `pid ${prefix}/nginx.pid;`)
  main = replaceOnce(main, "access_log /dev/stdout relay;", `access_log ${prefix}/logs/access.log relay;`)
  main = replaceOnce(main, "error_log /dev/stderr warn;", `error_log ${prefix}/logs/error.log warn;`)
  main = main.replaceAll("/etc/nginx/privacy-relay/", `${prefix}/conf/`)
  // Temporary files (large request bodies) inside the prefix, which this user can write.
  main = replaceOnce(main, "http {", `http {\n    client_body_temp_path ${prefix}/body;\n    proxy_temp_path ${prefix}/proxy;\n    fastcgi_temp_path ${prefix}/fastcgi;\n    uwsgi_temp_path ${prefix}/uwsgi;\n    scgi_temp_path ${prefix}/scgi;`)
  let upstream = readFileSync(join(DEPLOY, "upstream.conf"), "utf8")
  upstream = replaceOnce(upstream, "gateway-1:8080", gatewayAddress)
  upstream = replaceOnce(upstream, "    server gateway-2:8080 max_fails=2 fail_timeout=10s;\n", "")
  const server = replaceOnce(readFileSync(join(DEPLOY, "privacy-relay.conf"), "utf8"), "listen 8080;", `listen 127.0.0.1:${listenPort};`)
  writeFileSync(join(prefix, "conf/upstream.conf"), upstream)
  writeFileSync(join(prefix, "conf/privacy-relay.conf"), server)
  writeFileSync(join(prefix, "nginx.conf"), main)
  // Run as root (CI), nginx would switch its workers to `nobody`, who cannot use this private prefix.
  const globals = process.getuid?.() === 0 ? ["-g", "user root;"] : []
  return { prefix, args: ["-p", prefix, "-c", join(prefix, "nginx.conf"), ...globals] }
}

describe("deploy/nginx in front of a gateway", () => {
  const fx = useRelayFixture({}, { chunkDelayMs: 150 })
  let nginx: ChildProcess | undefined
  let staged: ReturnType<typeof stageNginx>
  let proxyUrl: string

  beforeAll(async () => {
    expect(existsSync(NGINX), "Debian's nginx is installed (.ci/run installs it)").toBe(true)
    const port = await freePort()
    staged = stageNginx(port, fx.gw.url.replace("http://", ""))
    proxyUrl = `http://127.0.0.1:${port}`
    nginx = spawn(NGINX, [...staged.args, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] })
    for (let i = 0; i < 100; i++) {
      const up = await fetch(`${proxyUrl}/nginx-healthz`).then((r) => r.ok, () => false)
      if (up) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`nginx did not start: ${existsSync(join(staged.prefix, "logs/error.log")) ? readFileSync(join(staged.prefix, "logs/error.log"), "utf8") : ""}`)
  })
  afterAll(async () => {
    if (nginx?.pid !== undefined && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx!.once("exit", resolve))
      nginx.kill("SIGTERM")
      await exited
    }
    if (staged) rmSync(staged.prefix, { recursive: true, force: true })
  })

  it("nginx -t accepts the shipped configuration", () => {
    const check = spawnSync(NGINX, [...staged.args, "-t"], { encoding: "utf8" })
    expect(check.status, check.stderr).toBe(0)
    expect(check.stderr).toContain("test is successful")
  })

  it("replaces a client's X-Forwarded-For with its peer: six issuances claiming six networks count against one (5 per hour)", async () => {
    const statuses: Array<number> = []
    for (let i = 1; i <= 6; i++) {
      const res = await fetch(`${proxyUrl}/api/v1/self-service/key`, { method: "POST", headers: { "x-forwarded-for": `203.0.113.${i}` }, body: "{}" })
      statuses.push(res.status)
      if (i === 6) expect((await res.json()).error.code).toBe("rate_limited")
      else await res.text()
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429])
  })

  it("forwards a call to the gateway (its X-Request-Id comes back) and answers its own /nginx-healthz", async () => {
    const res = await fetch(`${proxyUrl}/healthz`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: "ok" })
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const own = await fetch(`${proxyUrl}/nginx-healthz`)
    expect({ status: own.status, id: own.headers.get("x-request-id") }).toEqual({ status: 200, id: null })
  })

  it("answers 413 payload_too_large itself for a body over 8 MiB: no X-Request-Id, nothing reached the gateway or the provider", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const metricsBefore = await (await fetch(`${fx.gw.url}/metrics`)).text()
    const res = await fetch(`${proxyUrl}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: Buffer.alloc(9 * 1024 * 1024, 0x20)
    })
    expect(res.status).toBe(413)
    expect(res.headers.get("x-request-id")).toBeNull()
    expect(await res.json()).toEqual({ error: { code: "payload_too_large", message: "The request body is larger than 8 MiB." } })
    expect(fx.provider.received).toHaveLength(0)
    const relayLine = (text: string) => text.split("\n").filter((l) => l.startsWith("gateway_http_requests_total{method=\"POST\",route=\"/api/v1/chat/completions\""))
    expect(relayLine(await (await fetch(`${fx.gw.url}/metrics`)).text())).toEqual(relayLine(metricsBefore))
  })

  it("does not serve /metrics to the public (404 from nginx, no X-Request-Id)", async () => {
    const res = await fetch(`${proxyUrl}/metrics`)
    expect(res.status).toBe(404)
    expect(res.headers.get("x-request-id")).toBeNull()
    expect((await res.json()).error.code).toBe("not_found")
  })

  it("passes a relay SSE stream through as it is written: the first frame arrives long before the stream ends", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const body = JSON.stringify({ model: "local-chat", stream: true, messages: [{ role: "user", content: "one two three four five six seven eight nine ten eleven twelve" }] })
    const started = Date.now()
    const res = await fetch(`${proxyUrl}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/)
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ""
    let firstFrameAt: number | undefined
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      if (firstFrameAt === undefined && text.includes("data: ")) firstFrameAt = Date.now()
    }
    const endedAt = Date.now()
    // The gateway also sends X-Accel-Buffering: no, so this proves the whole path streams, not the directive alone.
    // ~13 frames 150 ms apart: buffered, the first frame would arrive with the last, ~2 s after the start.
    expect(firstFrameAt).toBeDefined()
    expect(endedAt - firstFrameAt!).toBeGreaterThan(1000)
    expect(text).toContain("twelve")
    expect(endedAt - started).toBeGreaterThan(1500)
    expect(fx.provider.received).toHaveLength(1)
  })
})
