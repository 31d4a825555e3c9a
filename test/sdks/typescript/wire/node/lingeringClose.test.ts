// Issue 32 item 5: a 28 MB body sent by the official `openai` package got "APIConnectionError: Connection error."
// from the local proxy instead of its 413: the proxy answered on Content-Length and closed while the client was still
// writing, and the kernel reset the connection. The gateway did the same (its HTTP server closes once more than
// 256 KiB of body are unread). Both now read and discard the rest of the body, bounded, before closing.
import { connect } from "node:net"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import OpenAI from "openai"
import { describe, expect, it } from "vitest"
import { drainRequestBody } from "../../../../../sdks/typescript/src/wire/node/lingeringClose.ts"
import { inProcessTokeniser } from "../../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { useRelayFixture } from "../../../../support/relayFixture.ts"
import { startStubbedProxy } from "../../proxy/stubbedProxy.ts"

const SIZE = 28 * 1024 * 1024

/**
 * Sends the request head and its whole body, and only then reads: a server that closes early resets the connection
 * under the writes (EPIPE / ECONNRESET), and the answer is lost. Resolves with the raw answer, rejects on a reset.
 */
const writeAllThenRead = (url: string, path: string, headers: Record<string, string> = {}, chunked = false): Promise<string> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    let answer = ""
    socket.on("data", (d) => (answer += d))
    socket.on("error", reject)
    socket.on("close", () => resolve(answer))
    const head = Object.entries({ host: `${hostname}:${port}`, "content-type": "application/json", ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`).join("")
    socket.write(`POST ${path} HTTP/1.1\r\n${head}${chunked ? "transfer-encoding: chunked" : `content-length: ${SIZE}`}\r\nconnection: close\r\n\r\n`)
    const piece = Buffer.alloc(1024 * 1024, "a")
    let sent = 0
    const more = () => {
      while (sent < SIZE) {
        sent += piece.length
        const ok = socket.write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]) : piece)
        if (!ok) return void socket.once("drain", more)
      }
      if (chunked) socket.write("0\r\n\r\n")
    }
    more()
  })

const bigChat = () => ({ model: "local-chat", messages: [{ role: "user" as const, content: "a".repeat(SIZE) }] })

describe("local proxy: an over-limit body gets its 413, not a reset connection", () => {
  it("a client that writes its whole body before reading gets the 413 (Content-Length and chunked)", async () => {
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser("off") })
    for (const chunked of [false, true]) {
      const answer = await writeAllThenRead(proxy.url, "/v1/chat/completions", {}, chunked)
      expect(answer).toMatch(/^HTTP\/1\.1 413 /)
      expect(answer).toContain('"code":"payload_too_large"')
    }
    expect(proxy.gatewayCalls).toEqual([])
  })

  it("the official openai package gets APIError 413 payload_too_large, every time", async () => {
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser("off") })
    const openai = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "unused", maxRetries: 0 })
    for (let i = 0; i < 3; i++) {
      const error = await openai.chat.completions.create(bigChat()).then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect(error).toMatchObject({ status: 413, code: "payload_too_large" })
    }
  }, 60_000)
})

describe("gateway: an answer decided before the body was read reaches a client still writing", () => {
  const fx = useRelayFixture()

  it("413 payload_too_large on Content-Length, and 401 for a bad key with a large body", async () => {
    const tooLarge = await writeAllThenRead(fx.gw.url, "/api/v1/self-service/key")
    expect(tooLarge).toMatch(/^HTTP\/1\.1 413 /)
    expect(tooLarge).toContain('"code":"payload_too_large"')
    const badKey = await writeAllThenRead(fx.gw.url, "/api/v1/chat/completions", { authorization: `Bearer svc_${"a".repeat(52)}` })
    expect(badKey).toMatch(/^HTTP\/1\.1 401 /)
    expect(badKey).toContain('"code":"invalid_key"')
  }, 60_000)

  it("the official openai package gets the gateway's answer, not APIConnectionError", async () => {
    const openai = new OpenAI({ baseURL: `${fx.gw.url}/api/v1`, apiKey: `svc_${"a".repeat(52)}`, maxRetries: 0 })
    for (let i = 0; i < 3; i++) {
      const error = await openai.chat.completions.create(bigChat()).then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError)
    }
    expect(fx.provider.received).toEqual([])
  }, 60_000)
})

describe("the drain is bounded", () => {
  const server = async (onRequest: (req: IncomingMessage) => Promise<unknown>) => {
    const results: Array<unknown> = []
    const srv = createServer(async (req, res) => {
      results.push(await onRequest(req))
      res.end()
    })
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r))
    return { port: (srv.address() as AddressInfo).port, results, close: () => new Promise((r) => srv.close(r)) }
  }

  it("a body declared larger than the byte bound is not read at all; a trickle stops at the time bound", async () => {
    const s = await server((req) => drainRequestBody(req, { maxMs: 300, maxBytes: 1024 }))
    const huge = connect(s.port, "127.0.0.1")
    huge.write("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2048\r\n\r\n")
    const trickle = connect(s.port, "127.0.0.1")
    trickle.write("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nabc")
    const started = Date.now()
    await new Promise((r) => setTimeout(r, 600))
    expect(s.results).toEqual([false, false])
    expect(Date.now() - started).toBeLessThan(5_000)
    huge.destroy()
    trickle.destroy()
    await s.close()
  })
})
