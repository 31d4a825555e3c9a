// Retries of the SDK's transport: which answers are retried, how long it waits (Retry-After honoured), that a retried
// call keeps its Idempotency-Key, and how timeouts and aborts surface. A scripted fetch plays the gateway.
import { describe, expect, it } from "vitest"
import { AbortedError, ConnectionError, InvalidRequestError, RateLimitError, ServerError, TimeoutError } from "../../../sdks/typescript/src/errors.ts"
import { createTransport } from "../../../sdks/typescript/src/transport.ts"

type Step = Response | Error | "hang"

const scripted = (steps: Array<Step>) => {
  const calls: Array<{ at: number; headers: Headers }> = []
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    calls.push({ at: Date.now(), headers: new Headers(init.headers) })
    const step = steps.shift() ?? new Response("{}", { status: 200 })
    if (step === "hang") {
      return new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason)))
    }
    if (step instanceof Error) throw step
    return step
  }) as unknown as typeof fetch
  return { fetchImpl, calls }
}

const error = (status: number, code: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error: { code, message: `${code} happened` } }), { status, headers: { "x-request-id": "req-1", ...headers } })

const send = (t: ReturnType<typeof createTransport>, init: RequestInit = { headers: { "idempotency-key": "k-1" } }, options: Partial<Parameters<ReturnType<typeof createTransport>["send"]>[2]> = {}) =>
  t.send("http://127.0.0.1:1/x", init, { retry: true, ...options })

describe("SDK transport retries", () => {
  it("retries 429 after its Retry-After and 503 with backoff, keeping the same Idempotency-Key, then succeeds", async () => {
    const { fetchImpl, calls } = scripted([error(429, "rate_limited", { "retry-after": "1" }), error(503, "upstream_error"), new Response("ok")])
    const t = createTransport(fetchImpl, { retries: 2, baseDelayMs: 10, maxDelayMs: 20 }, 5_000)
    const response = await send(t)
    expect(await response.text()).toBe("ok")
    expect(calls).toHaveLength(3)
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(990)
    expect(calls.map((c) => c.headers.get("idempotency-key"))).toEqual(["k-1", "k-1", "k-1"])
  })

  it("does not retry a 400, and gives up after the retries with the last typed error", async () => {
    const bad = scripted([error(400, "invalid_request")])
    await expect(send(createTransport(bad.fetchImpl, { retries: 3, baseDelayMs: 1, maxDelayMs: 1 }, 5_000))).rejects.toMatchObject({
      constructor: InvalidRequestError,
      status: 400,
      code: "invalid_request",
      requestId: "req-1",
      message: "invalid_request happened"
    })
    expect(bad.calls).toHaveLength(1)
    const down = scripted([error(502, "upstream_error"), error(502, "upstream_error"), error(502, "upstream_error")])
    await expect(send(createTransport(down.fetchImpl, { retries: 2, baseDelayMs: 1, maxDelayMs: 1 }, 5_000))).rejects.toBeInstanceOf(ServerError)
    expect(down.calls).toHaveLength(3)
  })

  it("a call that may not be retried is sent once; a Retry-After beyond a minute goes straight to the caller", async () => {
    const once = scripted([error(503, "upstream_error")])
    await expect(send(createTransport(once.fetchImpl, { retries: 2, baseDelayMs: 1, maxDelayMs: 1 }, 5_000), {}, { retry: false })).rejects.toBeInstanceOf(ServerError)
    expect(once.calls).toHaveLength(1)
    const long = scripted([error(429, "quota_exceeded", { "retry-after": "3600" })])
    const failure = await send(createTransport(long.fetchImpl, { retries: 2, baseDelayMs: 1, maxDelayMs: 1 }, 5_000)).catch((e) => e)
    expect(failure).toBeInstanceOf(RateLimitError)
    expect(failure.retryAfterSeconds).toBe(3600)
    expect(long.calls).toHaveLength(1)
  })

  it("network errors are retried and surface as ConnectionError; a hang is a TimeoutError; the caller's abort an AbortedError", async () => {
    const net = scripted([new TypeError("fetch failed"), new TypeError("fetch failed")])
    await expect(send(createTransport(net.fetchImpl, { retries: 1, baseDelayMs: 1, maxDelayMs: 1 }, 5_000))).rejects.toMatchObject({ constructor: ConnectionError, status: 0, code: "connection_error" })
    expect(net.calls).toHaveLength(2)
    const hang = scripted(["hang"])
    await expect(send(createTransport(hang.fetchImpl, { retries: 0, baseDelayMs: 1, maxDelayMs: 1 }, 50))).rejects.toMatchObject({ constructor: TimeoutError, code: "timeout" })
    const aborted = scripted(["hang"])
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 20)
    await expect(send(createTransport(aborted.fetchImpl, { retries: 2, baseDelayMs: 1, maxDelayMs: 1 }, 5_000), undefined, { signal: controller.signal })).rejects.toMatchObject({ constructor: AbortedError, code: "aborted" })
    expect(aborted.calls).toHaveLength(1)
  })
})
