import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway({ PORTAL_ORIGIN: "https://portal.example" })
})
afterAll(() => gw.close())

const expectStamped = (res: Response) => {
  expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  expect(res.headers.get("x-response-time")).toMatch(/^\d+ms$/)
  expect(res.headers.get("traceparent")).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
  expect(res.headers.get("server-timing")).toMatch(/(^|, )total;dur=\d+\.\d{3}$/)
}

describe("observability headers on every response the gateway produces", () => {
  it("200", async () => {
    const res = await fetch(`${gw.url}/api/v1/keys/scopes`)
    expect(res.status).toBe(200)
    expect((await res.json()).scopes.map((s: { name: string }) => s.name)).toEqual(["messages", "completions", "buffer"])
    expectStamped(res)
  })

  it("4xx with the error envelope", async () => {
    const res = await fetch(`${gw.url}/api/v1/chat/completions`, { method: "POST", body: "{}" })
    expect(res.status).toBe(401)
    expect((await res.json()).error.code).toBe("invalid_key")
    expectStamped(res)
  })

  it.each(["/api/v1/nothing-here", "/api/v1/tokenize", "/api/v1/detect", "/api/v1/detokenize", "/api/v1/reconstruct"])(
    "404 not_found for %s (retired and unknown routes)",
    async (path) => {
      const res = await fetch(`${gw.url}${path}`, { method: "POST", body: "{}" })
      expect(res.status).toBe(404)
      expect((await res.json()).error.code).toBe("not_found")
      expectStamped(res)
    }
  )

  it("OPTIONS", async () => {
    const res = await fetch(`${gw.url}/api/v1/chat/completions`, { method: "OPTIONS" })
    expect(res.status).toBe(204)
    expectStamped(res)
  })

  it("echoes a valid client X-Request-Id and replaces an invalid or over-long one", async () => {
    const valid = "3f2c1d7e-8a9b-4c5d-9e0f-1a2b3c4d5e6f"
    expect((await fetch(`${gw.url}/healthz`, { headers: { "x-request-id": valid } })).headers.get("x-request-id")).toBe(valid)
    for (const bad of ["not-a-uuid", "3f2c1d7e-8a9b-1c5d-9e0f-1a2b3c4d5e6f", `${valid}${"x".repeat(120)}`]) {
      const id = (await fetch(`${gw.url}/healthz`, { headers: { "x-request-id": bad } })).headers.get("x-request-id")
      expect(id).not.toBe(bad)
      expect(id).toMatch(/^[0-9a-f-]{36}$/)
    }
  })

  it("continues a W3C traceparent with the same trace id; flag 01 marks the response sampled", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c"
    const res = await fetch(`${gw.url}/healthz`, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } })
    const tp = res.headers.get("traceparent")!
    expect(tp.split("-")[1]).toBe(traceId)
    expect(tp.split("-")[2]).not.toBe("b7ad6b7169203331")
    expect(tp.endsWith("-01")).toBe(true)
    const unsampled = await fetch(`${gw.url}/healthz`, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-00` } })
    expect(unsampled.headers.get("traceparent")!.endsWith("-00")).toBe(true)
    const garbage = await fetch(`${gw.url}/healthz`, { headers: { traceparent: "00-zzzz-b7ad6b7169203331-01" } })
    expect(garbage.headers.get("traceparent")!.split("-")[1]).toMatch(/^[0-9a-f]{32}$/)
  })
})

describe("CORS", () => {
  it("exposes bearer routes cross-origin only to PORTAL_ORIGIN", async () => {
    const portal = await fetch(`${gw.url}/api/v1/billing/balance`, { method: "OPTIONS", headers: { origin: "https://portal.example" } })
    expect(portal.headers.get("access-control-allow-origin")).toBe("https://portal.example")
    expect(portal.headers.get("access-control-allow-headers")).toContain("authorization")
    const evil = await fetch(`${gw.url}/api/v1/chat/completions`, { method: "OPTIONS", headers: { origin: "https://evil.example" } })
    expect(evil.headers.get("access-control-allow-origin")).toBeNull()
    const evilGet = await fetch(`${gw.url}/api/v1/keys/scopes`, { headers: { origin: "https://evil.example" } })
    expect(evilGet.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("lets anyone call the public self-service and verification routes cross-origin", async () => {
    const res = await fetch(`${gw.url}/api/v1/self-service/key`, { method: "OPTIONS", headers: { origin: "https://any.example" } })
    expect(res.headers.get("access-control-allow-origin")).toBe("*")
  })
})

describe("X-Service-Force-Trace", () => {
  it("forces sampling for an admin caller only (the sample ratio is 0 here)", async () => {
    const { createOrg, createPortalToken } = await import("../../../layers/AdminOperations.ts")
    const { org_id } = await gw.runtime.runPromise(createOrg({ name: "tracing" }))
    const admin = (await gw.runtime.runPromise(createPortalToken({ org_id, abilities: "ability:admin" }))).token
    const reader = (await gw.runtime.runPromise(createPortalToken({ org_id, abilities: "ability:billing.read" }))).token
    const flagFor = async (token: string | undefined) =>
      (await fetch(`${gw.url}/api/v1/keys/scopes`, {
        headers: { "x-service-force-trace": "1", ...(token ? { authorization: `Bearer ${token}` } : {}) }
      })).headers.get("traceparent")!.slice(-2)
    expect(await flagFor(admin)).toBe("01")
    expect(await flagFor(reader)).toBe("00")
    expect(await flagFor(undefined)).toBe("00")
  })
})

describe("SERVER_TIMING=off", () => {
  it("leaves the Server-Timing header out and keeps the others", async () => {
    const quiet = await startTestGateway({ SERVER_TIMING: "off" })
    try {
      const res = await fetch(`${quiet.url}/api/v1/keys/scopes`)
      expect(res.status).toBe(200)
      expect(res.headers.get("server-timing")).toBeNull()
      expect(res.headers.get("x-response-time")).toMatch(/^\d+ms$/)
    } finally {
      await quiet.close()
    }
  })
})

