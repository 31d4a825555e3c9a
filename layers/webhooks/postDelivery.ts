// Node-only (node:http, node:https). One webhook HTTP attempt against an address already checked by the
// SSRF guard: the socket is pinned to that address (no second DNS lookup), redirects are not followed,
// no connection is reused (agent: false), and the whole exchange is bounded by `timeoutMs`.
import { request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { pinnedLookup } from "../../src/webhooks/ssrf.ts"

export type PostResult =
  | { readonly status: number }
  | { readonly error: "timeout" | "network"; readonly detail: string }

export interface PostInput {
  readonly url: URL
  readonly target: { readonly address: string; readonly family: 4 | 6 }
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
  /** Aborts the request when the dispatcher stops (its fiber is interrupted). */
  readonly signal?: AbortSignal
}

/** Receivers' answers are not read beyond this many bytes: we only need the status, and must not be tied up. */
const MAX_RESPONSE_BYTES = 64 * 1024

export const postDelivery = (input: PostInput): Promise<PostResult> =>
  new Promise((resolve) => {
    const { url, target, headers, body, timeoutMs, signal } = input
    const bytes = Buffer.from(body, "utf8")
    const send = url.protocol === "https:" ? httpsRequest : httpRequest
    let settled = false
    const finish = (result: PostResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const req = send({
      protocol: url.protocol,
      // The hostname stays the URL's (Host header, TLS SNI and certificate checks), but `lookup` always answers
      // the checked address, and literal addresses are connected to as written (they were the ones checked).
      hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: { ...headers, "Content-Length": String(bytes.length) },
      lookup: pinnedLookup(target),
      agent: false,
      signal
    })
    // "2xx within 8 seconds": the timer covers connect, send and the complete answer.
    const timer = setTimeout(() => {
      req.destroy(new Error("timeout"))
      finish({ error: "timeout", detail: `no answer within ${timeoutMs} ms` })
    }, timeoutMs)
    req.on("response", (res: IncomingMessage) => {
      const status = res.statusCode ?? 0
      let received = 0
      res.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (received > MAX_RESPONSE_BYTES) {
          res.destroy()
          finish({ status })
        }
      })
      res.on("end", () => finish({ status }))
      res.on("error", () => finish({ status }))
      res.on("close", () => finish({ status }))
    })
    req.on("error", (error: NodeJS.ErrnoException) => {
      finish({ error: "network", detail: error.code ?? error.message })
    })
    req.end(bytes)
  })
