import { request } from "node:http"
import { describe, expect, it } from "vitest"
import { MAX_BODY_BYTES } from "../../../../layers/http/body.ts"
import { inProcessTokeniser } from "../../../../sdks/typescript/src/proxy/RequestTokeniser.ts"
import { MAX_REQUEST_BODY_BYTES } from "../../../../sdks/typescript/src/wire/bodyLimit.ts"
import type { NameModel } from "../../../../sdks/typescript/src/tokeniser/index.ts"
import { startStubbedProxy } from "./stubbedProxy.ts"

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: { error: { code: string; message: string } }
  readonly bytesSent: number
}

/**
 * POSTs to the proxy, writing the body in 64 KiB pieces (as long as the proxy reads), and returns the answer
 * with how many body bytes were written before it came.
 */
const post = (url: string, headers: Record<string, string | number>, pieces: number): Promise<Answer> =>
  new Promise((resolve, reject) => {
    let bytesSent = 0
    let answered = false
    const req = request(url, { method: "POST", headers }, (res) => {
      answered = true
      let raw = ""
      res.on("data", (chunk) => (raw += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(raw), bytesSent }))
    })
    req.on("error", (error) => (answered ? undefined : reject(error)))
    const piece = Buffer.alloc(64 * 1024, "a")
    const writeMore = () => {
      while (!answered && pieces > 0) {
        pieces--
        bytesSent += piece.length
        if (!req.write(piece)) return void req.once("drain", writeMore)
      }
      if (!answered) req.end()
    }
    writeMore()
  })

describe("local proxy: body size limit", () => {
  it("is the gateway's limit, 8 MiB, one constant for both", () => {
    expect(MAX_REQUEST_BODY_BYTES).toBe(8 * 1024 * 1024)
    expect(MAX_BODY_BYTES).toBe(MAX_REQUEST_BODY_BYTES)
  })

  it("a Content-Length over the limit is refused with 413 before the body is read, and nothing is sent", async () => {
    let tokenised = 0
    const proxy = await startStubbedProxy({
      tokeniser: { tokenise: async () => Promise.reject(new Error(`tokenised ${++tokenised}`)), close: async () => undefined }
    })
    // Declares one byte over the limit but sends nothing: the answer cannot have waited for the body.
    const answer = await post(`${proxy.url}/v1/chat/completions`, { "content-length": MAX_REQUEST_BODY_BYTES + 1 }, 0)
    expect(answer.status).toBe(413)
    expect(answer.body.error.code).toBe("payload_too_large")
    expect(answer.body.error.message).toMatch(/larger than 8388608 bytes \(8 MiB\), the gateway's limit; it was not sent/)
    expect(answer.headers.connection).toBe("close")
    expect(tokenised).toBe(0)
    expect(proxy.gatewayCalls).toEqual([])
  })

  it("a body without Content-Length is cut off with 413 as soon as it grows past the limit", async () => {
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser("off") })
    // 32 MiB offered in chunked encoding; the proxy stops reading just past 8 MiB.
    const answer = await post(`${proxy.url}/v1/chat/completions`, { "transfer-encoding": "chunked" }, 512)
    expect(answer.status).toBe(413)
    expect(answer.body.error.code).toBe("payload_too_large")
    expect(answer.bytesSent).toBeLessThan(16 * 1024 * 1024)
    expect(proxy.gatewayCalls).toEqual([])
  })

  it("a body that tokenising makes longer than the limit is refused with 413, and nothing is sent", async () => {
    // Every word is a name: each alias is longer than the word it replaces.
    const everyWord: NameModel = {
      detect: async (text) => [...text.matchAll(/\w+/g)].map((m) => ({ start: m.index, end: m.index + m[0].length, type: "PERSON" as const }))
    }
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser(everyWord), maxBodyBytes: 4_000 })
    const content = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ")
    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content }] })
    expect(body.length).toBeLessThan(4_000)
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", body })
    expect(res.status).toBe(413)
    expect((await res.json()).error.message).toMatch(/the tokenised request body is larger than 4000 bytes/)
    expect(proxy.gatewayCalls).toEqual([])
  })

  it("a body within the limit is relayed", async () => {
    const proxy = await startStubbedProxy({ tokeniser: inProcessTokeniser("off"), maxBodyBytes: 4_000 })
    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "short" }] })
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", body })
    expect(res.status).toBe(200)
    expect(proxy.gatewayCalls).toEqual(["http://gateway.invalid/api/v1/chat/completions"])
  })
})
