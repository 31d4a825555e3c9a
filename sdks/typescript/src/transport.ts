import { AbortedError, ConnectionError, errorFromAnswer, RateLimitError, type RelayError, retryAfterSeconds, TimeoutError } from "./errors.ts"

/** How a call is retried: on 429, 5xx and network errors, with exponential backoff and full jitter. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 2). */
  readonly retries: number
  /** First backoff step in ms (default 500); doubled per attempt, capped at `maxDelayMs`. */
  readonly baseDelayMs: number
  readonly maxDelayMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 2, baseDelayMs: 500, maxDelayMs: 8_000 }
/** A Retry-After longer than this is not waited for: the error goes to the caller, who can decide. */
const MAX_RETRY_AFTER_MS = 60_000

export interface SendOptions {
  readonly signal?: AbortSignal | undefined
  readonly timeoutMs?: number | undefined
  /** Retry this call? Only idempotent reads and calls that carry an Idempotency-Key are retried. */
  readonly retry: boolean
}

export interface Transport {
  /** One logical call: retried per the policy; resolves with the first answer < 400 or rejects with a RelayError. */
  readonly send: (url: string, init: RequestInit, options: SendOptions) => Promise<Response>
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener("abort", onAbort, { once: true })
  })

const isRetryableStatus = (status: number) => status === 429 || status === 408 || (status >= 500 && status !== 501)

/** A W3C traceparent for a new trace (the gateway continues it and returns it in its logs and spans). */
export const newTraceparent = (): string => {
  const hex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("")
  return `00-${hex(16)}-${hex(8)}-01`
}

export const createTransport = (fetchImpl: typeof fetch, policy: RetryPolicy, defaultTimeoutMs: number): Transport => ({
  send: async (url, init, options) => {
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs
    const attempts = options.retry ? policy.retries + 1 : 1
    for (let attempt = 1;; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs)
      const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout])
      let response: Response | undefined
      let failure: RelayError
      try {
        response = await fetchImpl(url, { ...init, signal, redirect: "error" })
      } catch (error) {
        if (options.signal?.aborted) throw new AbortedError({ status: 0, code: "aborted", message: "The call was aborted by the caller.", cause: error })
        failure = timeout.aborted
          ? new TimeoutError({ status: 0, code: "timeout", message: `The gateway did not answer within ${timeoutMs} ms.`, cause: error })
          : new ConnectionError({ status: 0, code: "connection_error", message: `The gateway could not be reached: ${(error as Error).message}`, cause: error })
      }
      if (response !== undefined) {
        if (response.status < 400) return response
        failure = errorFromAnswer(response.status, response.headers, await response.text().catch(() => ""))
        if (!isRetryableStatus(response.status)) throw failure
      }
      if (attempt >= attempts) throw failure!
      const backoff = Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
      const retryAfter = failure! instanceof RateLimitError
        ? failure!.retryAfterSeconds
        : retryAfterSeconds(response?.headers.get("retry-after") ?? null)
      const delay = retryAfter === undefined ? backoff : retryAfter * 1000
      if (delay > MAX_RETRY_AFTER_MS) throw failure!
      try {
        await sleep(delay, options.signal)
      } catch (error) {
        throw new AbortedError({ status: 0, code: "aborted", message: "The call was aborted by the caller.", cause: error })
      }
    }
  }
})
