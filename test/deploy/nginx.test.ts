import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { attestedHeaders } from "../support/engine.ts"
import { type NginxProxy, startNginx } from "../support/nginxProxy.ts"
import { useRelayFixture } from "../support/relayFixture.ts"
import { fundedKey } from "../support/tenant.ts"

describe("deploy/nginx in front of a gateway", () => {
  const fx = useRelayFixture({}, { chunkDelayMs: 150 })
  let nginx: NginxProxy | undefined
  let proxyUrl: string

  beforeAll(async () => {
    nginx = await startNginx([fx.gw.url.replace("http://", "")])
    proxyUrl = nginx.url
  })
  afterAll(async () => {
    await nginx?.stop()
  })

  it("nginx -t accepts the shipped configuration", () => {
    const check = nginx!.check()
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
