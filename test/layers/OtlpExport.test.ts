import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeProvider, startFakeProvider } from "../../programs/fake-provider.ts"
import { attestedHeaders } from "../support/engine.ts"
import { startTestGateway, type TestGateway } from "../support/gateway.ts"
import { fundedKey } from "../support/tenant.ts"

// A stand-in OTLP/HTTP collector on loopback: it records every JSON export request it receives.
let collector: Server
let collectorUrl: string
const exports: Array<any> = []
let provider: FakeProvider
let gw: TestGateway | undefined

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", () => {
      if (req.url === "/v1/traces") exports.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r))
  const address = collector.address()
  collectorUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`
  provider = await startFakeProvider({ port: 0 })
})
afterAll(async () => {
  await gw?.close()
  await provider.close()
  await new Promise((r) => collector.close(r))
})

const spansOf = (payload: any): Array<{ traceId: string; spanId: string; name: string; kind: number; parentSpanId?: string; attributes: Array<{ key: string; value: any }> }> =>
  (payload.resourceSpans ?? []).flatMap((rs: any) => (rs.scopeSpans ?? []).flatMap((ss: any) => ss.spans ?? []))

describe("OTLP export", () => {
  it("exports the relay's stage spans to OTEL_EXPORTER_OTLP_ENDPOINT in the caller's trace when sampled", async () => {
    gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url, OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl })
    const { apiKey } = await fundedKey(gw)
    const traceId = "5b8efff798038103d269b633813fc60c"
    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "trace me" }] })
    const res = await fetch(`${gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        traceparent: `00-${traceId}-eee19b7ec3c1b174-01`,
        ...(await attestedHeaders("chat.completions", body))
      },
      body
    })
    expect(res.status).toBe(200)
    // closing the runtime flushes the exporter
    await gw.close()
    gw = undefined
    const spans = exports.flatMap(spansOf)
    const names = spans.filter((s) => s.traceId === traceId).map((s) => s.name)
    expect(names).toEqual(expect.arrayContaining(["relay.attestation", "relay.upstream.headers", "relay.settle"]))
  }, 60_000)

  it("exports the server span whose id the response's traceparent carries, child of the caller's span and ancestor of every other span; an unsampled call exports nothing", async () => {
    exports.length = 0
    gw = await startTestGateway({ LOCAL_PROVIDER_URL: provider.url, OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, TRACE_SAMPLE_RATIO: "0" })
    const { apiKey } = await fundedKey(gw)
    const call = async (traceparent: string) => {
      const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "trace me" }] })
      return fetch(`${gw!.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, traceparent, ...(await attestedHeaders("chat.completions", body)) },
        body
      })
    }
    const sampledTrace = "6c9efff798038103d269b633813fc60d"
    const unsampledTrace = "7d9efff798038103d269b633813fc60e"
    const sampled = await call(`00-${sampledTrace}-aaa19b7ec3c1b174-01`)
    const unsampled = await call(`00-${unsampledTrace}-bbb19b7ec3c1b174-00`)
    expect(sampled.status).toBe(200)
    expect(unsampled.status).toBe(200)
    const [, answeredTrace, serverSpanId, flags] = sampled.headers.get("traceparent")!.split("-")
    expect([answeredTrace, flags]).toEqual([sampledTrace, "01"])
    await gw.close()
    gw = undefined
    const spans = exports.flatMap(spansOf)
    expect(spans.filter((s) => s.traceId === unsampledTrace)).toEqual([])
    const ofCall = spans.filter((s) => s.traceId === sampledTrace)
    const server = ofCall.filter((s) => s.spanId === serverSpanId)
    expect(server).toHaveLength(1)
    expect(server[0].name).toBe("POST /api/v1/chat/completions")
    expect(server[0].kind).toBe(2) // SERVER
    expect(server[0].parentSpanId).toBe("aaa19b7ec3c1b174")
    const attributes = Object.fromEntries(server[0].attributes.map((a) => [a.key, Object.values(a.value)[0]]))
    expect(attributes).toMatchObject({ "http.request.method": "POST", "http.route": "/api/v1/chat/completions", "request_id": sampled.headers.get("x-request-id") })
    expect(String(attributes["http.response.status_code"])).toBe("200")
    // Every other span reaches the server span through exported parents: no dangling parent id.
    const byId = new Map(ofCall.map((s) => [s.spanId, s]))
    expect(ofCall.length).toBeGreaterThan(1)
    for (const span of ofCall) {
      let current = span
      while (current.spanId !== serverSpanId) {
        const parent = byId.get(current.parentSpanId ?? "")
        expect(parent, `${current.name}'s parent ${current.parentSpanId} is exported`).toBeDefined()
        current = parent!
      }
    }
  }, 60_000)
})
