import { connect, createServer, type Server } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { createTestStorage, type TestStorage } from "../support/databases.ts"
import { attestedHeaders } from "../support/engine.ts"
import { failedGatewayStart, type GatewayProcess, startGatewayProcess, stopGatewayProcess } from "../support/gatewayProcess.ts"

/**
 * What an operator sees on the gateway's stdout (issue 14 item 4): one JSON access line per request at info, sampled
 * or not, naming method, route template, status, duration, request id, key prefix and organisation, and never any
 * content; and a start-up that fails prints one JSON line saying why in words, then exits non-zero.
 */

const MARKER = "marker-c41d7a"

const jsonLines = (output: string) =>
  output.split("\n").filter((line) => line.trim() !== "").map((line) => {
    expect(() => JSON.parse(line), `not a JSON line: ${line}`).not.toThrow()
    return JSON.parse(line) as { message: string; level: string; annotations: Record<string, unknown> }
  })

describe("access log (TRACE_SAMPLE_RATIO=0: no request is sampled)", () => {
  let provider: FakeProvider
  let storage: TestStorage
  let gateway: GatewayProcess
  beforeAll(async () => {
    provider = await startFakeProvider({ port: 0 })
    storage = await createTestStorage()
    gateway = await startGatewayProcess({
      ...storage.env,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      TRACE_SAMPLE_RATIO: "0",
      LOCAL_PROVIDER_URL: provider.url
    })
  })
  afterAll(async () => {
    await stopGatewayProcess(gateway)
    await provider?.close()
    await storage?.drop()
  })

  /** The access line of one request, by its X-Request-Id (the line is written as the response leaves). */
  const accessLine = async (requestId: string) => {
    for (let i = 0; i < 50; i++) {
      const lines = jsonLines(gateway.output()).filter((l) => l.message === "request" && l.annotations.request_id === requestId)
      if (lines.length > 0) {
        expect(lines).toHaveLength(1)
        return lines[0]!
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`no access line for ${requestId}:\n${gateway.output()}`)
  }

  it("logs a relay call with its route template, status, duration, request id, key prefix and organisation, and nothing of the body", async () => {
    const issued = await fetch(`${gateway.url}/api/v1/self-service/key`, { method: "POST", body: "{}" })
    const { api_key: apiKey, key_prefix: keyPrefix } = await issued.json()
    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: `Hello <EMAIL_1> ${MARKER}` }] })
    const res = await fetch(`${gateway.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(await attestedHeaders("chat.completions", body)) },
      body
    })
    // a fresh key has no balance: refused after authentication, so the caller is known
    expect(res.status).toBe(402)
    await res.arrayBuffer()
    const line = await accessLine(res.headers.get("x-request-id")!)
    expect(line.level).toBe("INFO")
    expect(line.annotations).toMatchObject({
      method: "POST",
      route: "/api/v1/chat/completions",
      status: 402,
      key_prefix: keyPrefix,
      sampled: false
    })
    expect(line.annotations.org_id).toMatch(/^org_/)
    expect(line.annotations.duration_ms).toBeGreaterThan(0)
    expect(line.annotations).not.toHaveProperty("path")
    const everything = gateway.output()
    expect(everything).not.toContain(MARKER)
    expect(everything).not.toContain(apiKey)
  })

  it("logs a 404 with its path (no query string) and no route, and a parameterised route by its template", async () => {
    const missing = await fetch(`${gateway.url}/api/v1/no-such-route?token=${MARKER}`)
    expect(missing.status).toBe(404)
    const line = await accessLine(missing.headers.get("x-request-id")!)
    expect(line.annotations).toMatchObject({ method: "GET", route: null, path: "/api/v1/no-such-route", status: 404, key_prefix: null, org_id: null })
    const receipt = await fetch(`${gateway.url}/api/v1/receipts/${"ab".repeat(16)}`)
    expect(receipt.status).toBe(401)
    expect((await accessLine(receipt.headers.get("x-request-id")!)).annotations).toMatchObject({ route: "/api/v1/receipts/:jti", status: 401 })
    expect(gateway.output()).not.toContain(MARKER)
  })

  it("writes exactly one line per request and only JSON lines", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) ids.push((await fetch(`${gateway.url}/healthz`)).headers.get("x-request-id")!)
    for (const id of ids) await accessLine(id)
    expect(jsonLines(gateway.output()).length).toBeGreaterThan(5)
  })
})

describe("a start-up that fails prints one JSON line saying why and exits non-zero", () => {
  let taken: Server
  let port: number
  beforeAll(async () => {
    taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", () => resolve()))
    port = (taken.address() as { port: number }).port
  })
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())))

  const onlyLine = (output: string) => {
    const lines = jsonLines(output)
    expect(lines, output).toHaveLength(1)
    expect(lines[0]!.level).toBe("FATAL")
    return lines[0]!
  }

  it("port in use", async () => {
    const { code, output } = await failedGatewayStart({ HOST: "127.0.0.1", PORT: String(port), DATA_DIR: ":memory:" })
    expect(code).not.toBe(0)
    const line = onlyLine(output)
    expect(line.message).toBe(`port ${port} on 127.0.0.1 is already in use; set PORT`)
    expect(line.annotations).toEqual({ event: "startup_failed", reason: "port_in_use" })
  })

  it("database unreachable, without the password of DATABASE_URL", async () => {
    // a port nothing listens on: bound, then released
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", () => resolve()))
    const closedPort = (closed.address() as { port: number }).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const { code, output } = await failedGatewayStart({ HOST: "127.0.0.1", PORT: "0", DATABASE_URL: `postgres://relay:pw-${MARKER}@127.0.0.1:${closedPort}/relay` })
    expect(code).not.toBe(0)
    const line = onlyLine(output)
    expect(line.message).toBe(`database unreachable: cannot connect to PostgreSQL at 127.0.0.1:${closedPort} (ECONNREFUSED); check DATABASE_URL and that the server runs`)
    expect(line.annotations.reason).toBe("database_unreachable")
    expect(output).not.toContain(MARKER)
  })

  it("an invalid setting", async () => {
    const { code, output } = await failedGatewayStart({ PORT: "eighty" })
    expect(code).not.toBe(0)
    expect(onlyLine(output).message).toBe('invalid setting: PORT must be a port number (0-65535), got "eighty"')
  })

  it("an invalid receipt key rotation schedule or check interval", async () => {
    // (in memory, the gateway also warns that its KEK is per-process: only the FATAL line is about the failure)
    const fatal = (output: string) => {
      const lines = jsonLines(output).filter((l) => l.level === "FATAL")
      expect(lines, output).toHaveLength(1)
      return lines[0]!
    }
    const schedule = await failedGatewayStart({ HOST: "127.0.0.1", PORT: "0", DATA_DIR: ":memory:", RECEIPT_KEY_ROTATION: "fortnightly" })
    expect(schedule.code).not.toBe(0)
    expect(fatal(schedule.output)).toMatchObject({
      message: 'invalid setting: RECEIPT_KEY_ROTATION must be quarterly, monthly, yearly, off, or a period of at least 1s such as 90d, 12h or 2s (got "fortnightly")',
      annotations: { event: "startup_failed", reason: "invalid_setting" }
    })
    const check = await failedGatewayStart({ HOST: "127.0.0.1", PORT: "0", DATA_DIR: ":memory:", RECEIPT_KEY_ROTATION_CHECK_MS: "0" })
    expect(check.code).not.toBe(0)
    expect(fatal(check.output).message).toBe('invalid setting: RECEIPT_KEY_ROTATION_CHECK_MS must be a positive whole number of milliseconds, got "0"')
  }, 120_000)

  it("a setting that used to become NaN or a silent default stops the start before anything listens", async () => {
    // a port nothing listens on: bound, then released
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()))
    const freePort = (probe.address() as { port: number }).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    for (const [name, value, message] of [
      ["PROVIDER_COOLDOWN_MS", "soon", 'invalid setting: PROVIDER_COOLDOWN_MS must be a whole number of milliseconds, 0 or more, got "soon"'],
      ["PG_MAX_CONNECTIONS", "ten", 'invalid setting: PG_MAX_CONNECTIONS must be a positive whole number, got "ten"']
    ] as const) {
      const { code, output } = await failedGatewayStart({ HOST: "127.0.0.1", PORT: String(freePort), DATA_DIR: ":memory:", [name]: value })
      expect(code).toBe(1)
      expect(onlyLine(output)).toMatchObject({ message, annotations: { event: "startup_failed", reason: "invalid_setting" } })
      const refused = await new Promise<boolean>((resolve) => {
        const socket = connect(freePort, "127.0.0.1")
        socket.once("connect", () => (socket.destroy(), resolve(false)))
        socket.once("error", () => resolve(true))
      })
      expect(refused, `something listens on ${freePort}`).toBe(true)
    }
  }, 120_000)
})
