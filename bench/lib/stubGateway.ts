/**
 * A stand-in gateway for measuring the local proxy alone (`npm run bench:proxy`): answers the identity probe with a
 * JWKS of one P-256 key, and every relay call at once with an OpenAI chat completion echoing the last user message
 * (a stream when asked), with the headers a gateway sends. It does no gateway work, so what the proxy path costs
 * beyond a call to it is the proxy's own. Run as its own process: prints `{"url":...}`. 127.0.0.1 only.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { STUB_GATEWAY_SETTINGS } from "../settings/stubGateway.ts"
import { readBenchSettings } from "./benchSettings.ts"

// STUB_GATEWAY_DELAY_MS: answer relay calls after this long, like a real gateway's time per call, so the proxy is
// measured at a real path's call rate (idle between calls) rather than flat out.
const { delayMs } = readBenchSettings("bench/lib/stubGateway.ts", STUB_GATEWAY_SETTINGS)
const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair
const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey)
const jwks = JSON.stringify({ keys: [{ kty, crv, x, y, kid: "stub-1", use: "sig", alg: "ES256" }] })
let n = 0
const later = (f: () => void) => (delayMs > 0 ? void setTimeout(f, delayMs) : f())

const server = createServer((req, res) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(jwks)
    return
  }
  const chunks: Buffer[] = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => later(() => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { stream?: boolean; messages: Array<{ content: string }> }
    const content = `Echo: ${body.messages.at(-1)?.content ?? ""}`
    const id = `req-${++n}`
    const headers = { "x-request-id": id, "x-service-receipt-v2": "stub", "x-service-receipt-v2-jti": id }
    if (body.stream === true) {
      res.writeHead(200, { ...headers, "content-type": "text/event-stream" })
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null }] })}\n\n`)
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } })}\n\n`)
      res.end("data: [DONE]\n\n")
      return
    }
    const text = JSON.stringify({
      id, object: "chat.completion", created: 0, model: "local-chat",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }
    })
    res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) })
    res.end(text)
  }))
})
server.keepAliveTimeout = 30_000
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(`${JSON.stringify({ msg: "stub gateway listening", url: `http://127.0.0.1:${port}` })}\n`)
})
process.once("SIGTERM", () => server.close(() => process.exit(0)))
