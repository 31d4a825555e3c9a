// layers/http/body.ts: the gateway never holds a request body larger than its limit in memory. A declared
// Content-Length over the limit is refused before reading; a chunked body (no length) used to be read whole and only
// then measured, so an endless chunked upload grew the process without bound. Now it is refused as it passes 8 MiB.
import { connect } from "node:net"
import { describe, expect, it } from "vitest"
import { MAX_REQUEST_BODY_BYTES } from "../../../sdks/typescript/src/wire/bodyLimit.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"

/** Writes a chunked body 1 MiB at a time, never ending it, until the server answers or `capBytes` are sent. */
const endlessChunkedUpload = (url: string, path: string, capBytes: number): Promise<{ answer: string; sent: number }> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    let answer = ""
    let sent = 0
    let done = false
    const finish = () => {
      if (done) return
      done = true
      socket.destroy()
      resolve({ answer, sent })
    }
    socket.on("data", (d) => {
      answer += d
      if (answer.includes("\r\n\r\n") && answer.includes("}")) finish()
    })
    socket.on("error", (e) => (done ? undefined : reject(e)))
    socket.on("close", finish)
    socket.write(`POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`)
    const piece = Buffer.concat([Buffer.from(`${(1024 * 1024).toString(16)}\r\n`), Buffer.alloc(1024 * 1024, "a"), Buffer.from("\r\n")])
    const more = () => {
      while (!done && sent < capBytes) {
        sent += 1024 * 1024
        if (!socket.write(piece)) return void socket.once("drain", more)
      }
      if (!done && sent >= capBytes) setTimeout(finish, 5_000) // no answer while the body never ends: the old behaviour
    }
    more()
  })

describe("gateway request body limit (layers/http/body.ts)", () => {
  const fx = useRelayFixture()

  it("a chunked body that never ends gets 413 payload_too_large once it passes the limit, not after it ends", async () => {
    const cap = 6 * MAX_REQUEST_BODY_BYTES
    const { answer, sent } = await endlessChunkedUpload(fx.gw.url, "/api/v1/self-service/key", cap)
    expect(answer).toMatch(/^HTTP\/1\.1 413 /)
    expect(answer).toContain('"code":"payload_too_large"')
    // Answered while the body was still coming: well before the client's cap (socket buffers hold a few MiB).
    expect(sent).toBeLessThan(cap)
  }, 60_000)

  it("a chunked body under the limit is read whole (a self-service key is issued)", async () => {
    const res = await fetch(`${fx.gw.url}/api/v1/self-service/key`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      // A ReadableStream body has no length: undici sends it chunked.
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode("{"))
          c.enqueue(new TextEncoder().encode("}"))
          c.close()
        }
      }),
      duplex: "half"
    } as RequestInit)
    expect(res.status).toBe(201)
    expect((await res.json()).api_key).toMatch(/^svc_/)
  })
})
