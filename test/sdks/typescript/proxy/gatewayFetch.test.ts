import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { type GatewayFetch, undiciGatewayFetch } from "../../../../sdks/typescript/src/proxy/gatewayFetch.ts"

const servers: Array<Server> = []
const clients: Array<GatewayFetch> = []
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close()
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r))
})

/** A local server; `seen` records every request's method, path and body, `connections` every new TCP connection. */
const serve = async (handler: Parameters<typeof createServer>[1]) => {
  const seen: Array<{ method: string; path: string; body: string }> = []
  let connections = 0
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      seen.push({ method: req.method ?? "", path: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") })
      handler!(req, res)
    })
  })
  server.on("connection", () => connections++)
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, connections: () => connections }
}
const client = () => {
  const c = undiciGatewayFetch()
  clients.push(c)
  return c
}

describe("undiciGatewayFetch: the proxy's own way to call its gateway", () => {
  it("sends the method, headers and body, and answers a Response with the status, headers and body; calls reuse their connections", async () => {
    const gateway = await serve((req, res) => {
      res.setHeader("set-cookie", ["a=1", "b=2"])
      res.writeHead(402, { "content-type": "application/json", "x-request-id": String(req.headers["x-request-id"]) })
      res.end('{"error":{"code":"insufficient_balance"}}')
    })
    const { fetch } = client()
    const ids = ["r1", "r2", "r3", "r4", "r5", "r6"]
    for (const id of ids) {
      const response = await fetch(`${gateway.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": id },
        body: Buffer.from('{"x":1}'),
        signal: new AbortController().signal
      })
      expect(response.status).toBe(402)
      expect(response.ok).toBe(false)
      expect(response.headers.get("x-request-id")).toBe(id)
      expect(response.headers.get("set-cookie")).toBe("a=1, b=2")
      expect(await response.json()).toEqual({ error: { code: "insufficient_balance" } })
    }
    expect(gateway.seen).toEqual(ids.map(() => ({ method: "POST", path: "/api/v1/chat/completions", body: '{"x":1}' })))
    // Keep-alive: not a connection per call (undici may open a second while the first is being released).
    expect(gateway.connections()).toBeLessThanOrEqual(2)
  })

  it("exchange answers the status, the headers by lower-case name (repeated ones joined) and the body text, without a Response", async () => {
    const gateway = await serve((req, res) => {
      res.setHeader("x-service-receipt-v2", ["r1", "r2"])
      res.writeHead(200, { "content-type": "application/json", "X-Request-Id": String(req.headers["x-request-id"]) })
      res.end('{"ok":true}')
    })
    const answer = await client().exchange(`${gateway.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "r9" },
      body: Buffer.from('{"x":1}'),
      signal: new AbortController().signal
    })
    expect(answer.status).toBe(200)
    expect(answer.headers["x-request-id"]).toBe("r9")
    expect(answer.headers["x-service-receipt-v2"]).toBe("r1, r2")
    expect(answer.headers["content-type"]).toBe("application/json")
    expect(await answer.text()).toBe('{"ok":true}')
    expect(gateway.seen).toEqual([{ method: "POST", path: "/api/v1/chat/completions", body: '{"x":1}' }])
  })

  it("passes an event stream on as it arrives: the first frame is readable before the gateway ends the answer", async () => {
    let finish = () => {}
    const gateway = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write("data: first\n\n")
      finish = () => res.end("data: [DONE]\n\n")
    })
    const response = await client().fetch(`${gateway.url}/s`, { method: "POST", body: "{}", signal: new AbortController().signal })
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n")
    finish()
    let rest = ""
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value)
    expect(rest).toBe("data: [DONE]\n\n")
  })

  it("a redirect is an error and is not followed: the body never reaches the redirect's target", async () => {
    const elsewhere = await serve((_req, res) => res.end("{}"))
    const gateway = await serve((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/steal` })
      res.end()
    })
    await expect(client().fetch(`${gateway.url}/api/v1/chat/completions`, { method: "POST", body: '{"tokenised":true}', signal: new AbortController().signal }))
      .rejects.toThrow(/redirect \(307\)/)
    expect(elsewhere.seen).toEqual([])
  })

  it("an aborted signal stops a call that has no answer yet", async () => {
    const gateway = await serve(() => undefined)
    const controller = new AbortController()
    const call = client().fetch(`${gateway.url}/hang`, { method: "POST", body: "{}", signal: controller.signal })
    setTimeout(() => controller.abort(new Error("client left")), 50)
    await expect(call).rejects.toThrow()
  })
})
