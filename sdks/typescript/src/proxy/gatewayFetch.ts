/**
 * The `fetch` the local proxy calls its gateway with, unless it is given one (tests observe egress through theirs):
 * undici's `request` on the proxy's own keep-alive pool, answered as a WHATWG Response so the SDK's exchange code
 * (relayExchange.ts) handles it as any other. Issue 24: the WHATWG `fetch` algorithm cost the proxy about 0.5 ms more
 * CPU per call than `request` for the same exchange (micro-bench, stub gateway). A non-streamed answer is read whole
 * before the Response is made (the proxy reads it whole anyway); an event stream is passed on as it arrives.
 * Redirects are errors, as with `fetch(..., { redirect: "error" })`: the tokenised body goes to the configured
 * gateway or nowhere.
 */
import { Readable } from "node:stream"
import { Agent, request } from "undici"

/** Statuses whose Response must not have a body. */
const NULL_BODY = new Set([101, 204, 205, 304])

export interface GatewayFetch {
  readonly fetch: (url: string, init: RequestInit) => Promise<Response>
  readonly close: () => Promise<void>
}

export const undiciGatewayFetch = (): GatewayFetch => {
  // Connections to the gateway stay open between calls (30 s idle): no TCP or TLS handshake per call.
  const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 })
  const fetchImpl = async (url: string, init: RequestInit): Promise<Response> => {
    const answer = await request(url, {
      method: (init.method ?? "GET") as "GET" | "POST",
      headers: init.headers as Record<string, string> | undefined,
      body: (init.body ?? undefined) as Uint8Array | string | undefined,
      signal: init.signal ?? undefined,
      dispatcher: agent,
      // The caller's signal carries the proxy's time limit for the whole exchange.
      headersTimeout: 0,
      bodyTimeout: 0
    })
    if (answer.statusCode >= 300 && answer.statusCode < 400) {
      await answer.body.dump().catch(() => undefined)
      throw new TypeError(`the gateway answered a redirect (${answer.statusCode}); redirects are not followed`)
    }
    const headers = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
    }
    const init2 = { status: answer.statusCode, headers }
    if (NULL_BODY.has(answer.statusCode)) {
      await answer.body.dump().catch(() => undefined)
      return new Response(null, init2)
    }
    const streamed = (headers.get("content-type") ?? "").startsWith("text/event-stream")
    return new Response(streamed ? (Readable.toWeb(answer.body) as ReadableStream<Uint8Array>) : await answer.body.text(), init2)
  }
  return { fetch: fetchImpl, close: () => agent.close() }
}
