import { type ChildProcess, spawn } from "node:child_process"
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFakeProvider, type FakeProvider } from "../../programs/fake-provider.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { fundedKey } from "../support/tenant.ts"

const PROGRAM = join(import.meta.dirname, "../../programs/proxy.ts")

let provider: FakeProvider
let gw: TestGateway
let dir: string
let apiKey: string
let keyFile: string
const children: Array<ChildProcess> = []

beforeAll(async () => {
  provider = await startFakeProvider({ port: 0 })
  gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url })
  ;({ apiKey } = await fundedKey(gw))
  dir = mkdtempSync(join(tmpdir(), "proxy-program-"))
  keyFile = join(dir, "gateway-key")
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 })
  chmodSync(keyFile, 0o600)
})
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM")
  await gw?.close()
  await provider?.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Outcome {
  /** null while the proxy is still running */
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly child: ChildProcess
}

/** Everything a child has written to stdout so far (Outcome.stdout is what it had written when the run resolved). */
const liveStdout = new WeakMap<ChildProcess, { text: string }>()
const stdoutOf = (run: Outcome): string => liveStdout.get(run.child)?.text ?? ""

/** Runs `node programs/proxy.ts` until it either exits or announces that it listens. */
const runProxy = (env: Record<string, string>, args: Array<string> = []): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PROGRAM, ...args], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        PRIVACY_RELAY_CONFIG_DIR: join(dir, "config"),
        GATEWAY_URL: gw.url,
        GATEWAY_KEY_FILE: keyFile,
        PROXY_HOST: "127.0.0.1",
        PROXY_PORT: "0",
        NAME_MODEL: "off",
        ...env
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let stdout = ""
    let stderr = ""
    const live = { text: "" }
    liveStdout.set(child, live)
    child.stdout!.on("data", (chunk) => {
      stdout += chunk
      live.text += chunk
      if (stdout.includes("listening on")) resolve({ code: null, stdout, stderr, child })
    })
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code, stdout, stderr, child }))
  })

const listeningServer = async (): Promise<Server> => {
  const server = createServer((_, res) => res.end("occupied"))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return server
}

/** Starts the proxy program, sends each request through it, stops it; answers the statuses. */
const throughProxy = async (requests: ReadonlyArray<{ readonly path: string; readonly body: unknown }>) => {
  const run = await runProxy({})
  expect(run.code).toBeNull()
  const url = /listening on (http:\/\/\S+)/.exec(run.stdout)![1]
  const statuses: Array<number> = []
  for (const r of requests) {
    const res = await fetch(`${url}${r.path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(r.body) })
    statuses.push(res.status)
    await res.text()
  }
  run.child.kill("SIGTERM")
  await new Promise((resolve) => run.child.once("exit", resolve))
  return { statuses, output: run.stdout + run.stderr }
}

describe("stable aliases on the embeddings route (repeatable embeddings)", () => {
  it("two identical requests, and the same after a restart, reach the provider byte-identical with no original value", async () => {
    provider.reset()
    const embed = { path: "/v1/embeddings", body: { model: "local-embed", input: ["Invoice for jane.doe@example.com", "call +44 20 7946 0958"] } }
    const first = await throughProxy([embed, embed])
    const second = await throughProxy([embed])
    expect([...first.statuses, ...second.statuses]).toEqual([200, 200, 200])
    const bodies = provider.received.filter((r) => r.path === "/v1/embeddings").map((r) => r.body.toString("utf8"))
    expect(bodies).toHaveLength(3)
    expect(bodies[1]).toBe(bodies[0])
    expect(bodies[2]).toBe(bodies[0])
    expect(JSON.parse(bodies[0]).input[0]).toMatch(/^Invoice for <EMAIL_[a-z2-9]{10}>$/)
    const secret = readFileSync(join(dir, "config", "alias-secret"), "utf8").trim()
    for (const r of provider.received) {
      const seen = r.body.toString("utf8") + JSON.stringify(r.headers)
      for (const value of ["jane.doe@example.com", "7946 0958", secret]) expect(seen).not.toContain(value)
    }
    expect(first.output + second.output).not.toContain(secret)
  })

  it("chat completions keep per-request aliases: the same prompt twice gets unrelated aliases", async () => {
    provider.reset()
    const chat = { path: "/v1/chat/completions", body: { model: "local-chat", messages: [{ role: "user", content: "Mail jane.doe@example.com" }] } }
    expect((await throughProxy([chat, chat])).statuses).toEqual([200, 200])
    const bodies = provider.received.filter((r) => r.path === "/v1/chat/completions").map((r) => JSON.parse(r.body.toString("utf8")).messages[0].content)
    expect(bodies).toHaveLength(2)
    for (const b of bodies) expect(b).toMatch(/^Mail <EMAIL_1_[a-z2-9]{4}>$/)
    expect(bodies[0]).not.toBe(bodies[1])
  })
})

describe("programs/proxy.ts", () => {
  it("starts on the port named in a PROXY_CONFIG file and answers /healthz", async () => {
    const probe = await listeningServer()
    const port = (probe.address() as AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    const config = join(dir, "proxy.json")
    writeFileSync(config, JSON.stringify({ host: "127.0.0.1", port, gateway_url: gw.url, gateway_key_file: keyFile, name_model: "off" }))
    const run = await runProxy({ PROXY_CONFIG: config, PROXY_PORT: "", GATEWAY_URL: "", GATEWAY_KEY_FILE: "" })
    expect(run.stderr).toBe("")
    expect(run.code).toBeNull()
    expect(run.stdout).toContain(`listening on http://127.0.0.1:${port}`)
    const res = await fetch(`http://127.0.0.1:${port}/healthz`)
    expect(res.status).toBe(200)
    expect((await res.json()).status).toBe("ok")
    run.child.kill("SIGTERM")
    await new Promise((resolve) => run.child.once("exit", resolve))
    expect(run.child.exitCode).toBe(0)
  })

  it("SIGTERM while a long request is being tokenised: /healthz still answers and the proxy exits promptly", async () => {
    const run = await runProxy({ NAME_MODEL: "builtin" })
    expect(run.code).toBeNull()
    const url = /listening on (http:\/\/[^\s]+)/.exec(run.stdout)![1]
    const sentences = Array.from({ length: 40_000 }, (_, i) => `Yesterday Alice Number${i} met Bob Person${i} about report ${i}.`)
    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: sentences.join(" ") }] })
    const long = fetch(`${url}/v1/chat/completions`, { method: "POST", body }).then(
      (res) => res.status,
      () => "connection closed"
    )
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })
    expect(health.status).toBe(200)
    const exited = new Promise<number | null>((resolve) => run.child.once("exit", (code) => resolve(code)))
    const signalled = performance.now()
    run.child.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(performance.now() - signalled).toBeLessThan(3_000)
    // The long request never got an answer from the gateway: its connection was closed.
    expect(await long).toBe("connection closed")
  })

  it("port in use: clear error, non-zero exit, and it does not move to another port", async () => {
    const occupier = await listeningServer()
    try {
      const port = (occupier.address() as AddressInfo).port
      const run = await runProxy({ PROXY_PORT: String(port) })
      expect(run.code).not.toBe(0)
      expect(run.code).not.toBeNull()
      // One JSON log line with a one-line message, not a stack.
      const lines = run.stderr.trim().split("\n")
      expect(lines).toHaveLength(1)
      const logged = JSON.parse(lines[0]!)
      expect(logged).toMatchObject({ level: "FATAL", annotations: { event: "startup_failed", reason: "port_in_use" } })
      expect(logged.message).toContain(`127.0.0.1:${port} is already in use`)
      expect(logged.message).toContain("PROXY_PORT")
      expect(logged.message).not.toMatch(/\n|\bat .*\.ts:\d+/)
      expect(run.stdout).not.toContain("listening")
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("occupied")
    } finally {
      await new Promise<void>((resolve) => occupier.close(() => resolve()))
    }
  })

  it("unreachable gateway: one JSON log line saying so, non-zero exit", async () => {
    const occupier = await listeningServer()
    const port = (occupier.address() as AddressInfo).port
    await new Promise<void>((resolve) => occupier.close(() => resolve()))
    const run = await runProxy({ GATEWAY_URL: `http://127.0.0.1:${port}` })
    expect(run.code).toBe(1)
    const lines = run.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    const logged = JSON.parse(lines[0]!)
    expect(logged).toMatchObject({ level: "FATAL", annotations: { event: "startup_failed", reason: "gateway_unreachable" } })
    expect(logged.message).toMatch(new RegExp(`GATEWAY_URL http://127\\.0\\.0\\.1:${port} cannot be reached: .*ECONNREFUSED.*gateway running`))
  })

  it("logs one JSON access line per request on stdout, without the request's content", async () => {
    const run = await runProxy({})
    const url = /listening on (http:\/\/[^\s"]+)/.exec(run.stdout)![1]
    await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "mail jane.doe@example.com" }] })
    })
    const deadline = Date.now() + 5_000
    while (!stdoutOf(run).includes('"route":"/v1/chat/completions"') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const lines = stdoutOf(run).trim().split("\n").map((line) => JSON.parse(line))
    expect(lines[0]).toMatchObject({ level: "INFO", annotations: { event: "listening" } })
    const access = lines.filter((line) => line.message === "request")
    expect(access).toHaveLength(1)
    expect(access[0].annotations).toMatchObject({ method: "POST", route: "/v1/chat/completions", status: 200 })
    expect(access[0].annotations.request_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(stdoutOf(run)).not.toContain("jane.doe")
    expect(stdoutOf(run)).not.toMatch(/<EMAIL_/)
    run.child.kill("SIGTERM")
  })

  it("missing key file: clear error naming GATEWAY_KEY_FILE, non-zero exit", async () => {
    const missing = join(dir, "no-such-key")
    const run = await runProxy({ GATEWAY_KEY_FILE: missing })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`Gateway key file ${missing} does not exist`)
    expect(run.stderr).toContain("GATEWAY_KEY_FILE")
  })

  it("world-readable key file: refused with the chmod fix, and the key is not printed", async () => {
    const loose = join(dir, "loose-key")
    writeFileSync(loose, `${apiKey}\n`)
    chmodSync(loose, 0o644)
    const run = await runProxy({ GATEWAY_KEY_FILE: loose })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("readable by other users (mode 644)")
    expect(run.stderr).toContain(`chmod 600 ${loose}`)
    expect(run.stderr + run.stdout).not.toContain(apiKey)
  })

  it("a non-gateway URL is refused at start: plain http to a remote host", async () => {
    const run = await runProxy({ GATEWAY_URL: "http://example.com" })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/GATEWAY_URL http:\/\/example\.com is plain http to a non-loopback host.*https/)
  })

  it("a provider URL is refused at start: it does not answer the gateway identity probe", async () => {
    const run = await runProxy({ GATEWAY_URL: provider.url })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`GATEWAY_URL ${provider.url} is not a Privacy Relay gateway`)
  })

  it("command-line arguments are refused (secrets never travel on argv)", async () => {
    const run = await runProxy({}, ["--key", apiKey])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("takes no command-line arguments")
    expect(run.stderr).not.toContain(apiKey)
  })
})
