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

const spansOf = (payload: any): Array<{ traceId: string; name: string; parentSpanId?: string }> =>
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
})
