import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestGateway, type TestGateway } from "../../support/gateway.ts"

/**
 * The gateway serves no protocol upgrade: a request that offers one (the JDK HttpClient's `Upgrade: h2c` on every new
 * plain-http connection) is answered as the HTTP/1.1 request it also is, on a connection that stays usable, instead
 * of being handed to a WebSocket handler that closed the connection.
 */
let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway()
})
afterAll(async () => {
  await gw?.close()
})

const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
  new Promise<{ status: number; body: string; upgrade: string | undefined }>((resolve, reject) => {
    const url = new URL(path, gw.url)
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method, headers }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (d: string) => (text += d))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, upgrade: res.headers.upgrade }))
    })
    req.on("upgrade", () => reject(new Error("the server switched protocols")))
    req.on("error", reject)
    req.end(body)
  })

const h2c = { connection: "Upgrade, HTTP2-Settings", upgrade: "h2c", "http2-settings": "AAEAAEAAAAIAAAAAAAMAAAAAZAAEAQAAAAAFAABAAA" }

describe("a request offering a protocol upgrade", () => {
  it("GET with Upgrade: h2c is answered normally (200, the health body), no 101", async () => {
    const res = await send("GET", "/healthz", h2c)
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body).status).toBe("ok")
    expect(res.upgrade).toBeUndefined()
  })

  it("POST with a body and Upgrade: h2c reaches the route with its body (a 400 naming the bad JSON, not a dropped connection)", async () => {
    const res = await send("POST", "/api/v1/chat/completions", { ...h2c, "content-type": "application/json", authorization: "Bearer sk-not-a-key" }, "{")
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(JSON.parse(res.body).error.code).toEqual(expect.any(String))
  })

  it("Upgrade: websocket is not served either: answered as a plain request", async () => {
    const res = await send("GET", "/healthz", { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" })
    expect(res.status).toBe(200)
  })
})
