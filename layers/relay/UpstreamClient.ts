import { Effect } from "effect"
import type { Readable } from "node:stream"
import { Agent, errors, request } from "undici"
import { ApiError } from "../../src/http/ApiError.ts"

/**
 * One keep-alive connection pool per process for every upstream origin (undici). Timeouts cover the wait for
 * headers and every gap between body chunks; a client that goes away aborts the request (fiber interruption
 * aborts the signal), so no upstream socket outlives its call.
 */
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connections: 256 })

let inFlight = 0
/** Upstream requests currently open in this process (tests assert it returns to zero). */
export const openUpstreamRequests = () => inFlight

export interface UpstreamResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  /** undici's body, a Node Readable: a streamed answer is read from its 'readable' events (relaySettle.ts). */
  readonly body: Readable
  /** Call exactly once, when the body has been consumed or abandoned. */
  readonly done: () => void
}

export const upstreamTimeout = (provider: string) =>
  new ApiError({ status: 504, code: "upstream_timeout", message: `The upstream provider "${provider}" did not answer in time.` })

export const upstreamUnreachable = (provider: string) =>
  new ApiError({
    status: 502,
    code: "upstream_error",
    message: `The upstream provider "${provider}" could not be reached.`,
    extra: { provider, provider_status: null }
  })

export const isTimeout = (e: unknown) =>
  e instanceof errors.HeadersTimeoutError || e instanceof errors.BodyTimeoutError ||
  (e instanceof Error && (e.name === "TimeoutError" || (e as { code?: string }).code === "UND_ERR_CONNECT_TIMEOUT"))

export const postUpstream = (input: {
  readonly provider: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: Uint8Array
  readonly timeoutMs: number
}) =>
  Effect.tryPromise({
    try: async (signal) => {
      inFlight++
      let released = false
      const done = () => {
        if (!released) {
          released = true
          inFlight--
        }
      }
      try {
        const res = await request(input.url, {
          method: "POST",
          headers: input.headers,
          body: input.body,
          dispatcher: agent,
          signal,
          headersTimeout: input.timeoutMs,
          bodyTimeout: input.timeoutMs
        })
        res.body.once("close", done)
        return { status: res.statusCode, headers: res.headers, body: res.body, done } satisfies UpstreamResponse
      } catch (e) {
        done()
        throw e
      }
    },
    catch: (e) => (isTimeout(e) ? upstreamTimeout(input.provider) : upstreamUnreachable(input.provider))
  })
