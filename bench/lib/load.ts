/**
 * A closed-loop load generator: `concurrency` workers, each sending its next request as soon as the previous
 * answer has been read to the end, over one keep-alive connection per worker (undici Pool). Only answers completed
 * inside the measured window count (requests/s and latency); workers stop starting requests at the deadline and
 * what is still in flight then is drained but not counted.
 */
import { Pool } from "undici"
import { parseServerTiming } from "../../src/http/serverTiming.ts"
import type { AttestedRequest } from "./attested.ts"
import { percentile, Samples } from "./stats.ts"

export interface PhaseSpec {
  readonly origin: string
  readonly path: string
  readonly method?: "GET" | "POST"
  readonly concurrency: number
  readonly warmupMs: number
  readonly measureMs: number
  /** The next request; a pool hands out each attested request once. */
  readonly next: () => AttestedRequest | Promise<AttestedRequest>
  /** Never spend longer than this on one request (a hung server must not hang the bench). */
  readonly requestTimeoutMs?: number
  /** The status that counts as success (stage probes expect 401/402/403); default any 2xx. */
  readonly expectStatus?: number
}

export interface PhaseResult {
  /** answers completed inside the measured window */
  readonly requests: number
  /** every answer of the phase, warm-up and drain included: the denominator of CPU per call */
  readonly answered: number
  readonly rps: number
  /** status outside 2xx (or not `expectStatus`), or a transport error (-1) */
  readonly errors: number
  /** statuses seen, e.g. {"200": 812} */
  readonly statuses: Record<string, number>
  readonly latencyP50Ms: number
  readonly latencyP99Ms: number
  /** first body byte (first SSE frame for streams) */
  readonly ttfbP50Ms: number
  readonly ttfbP99Ms: number
  readonly firstError?: string
  /** mean duration per Server-Timing stage over the counted answers that carried the header (the gateway's), ms */
  readonly serverTiming?: Record<string, number>
}

export const runPhase = async (spec: PhaseSpec): Promise<PhaseResult> => {
  const pool = new Pool(spec.origin, {
    connections: spec.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: spec.requestTimeoutMs ?? 30_000,
    bodyTimeout: spec.requestTimeoutMs ?? 30_000
  })
  const latency = new Samples()
  const ttfb = new Samples()
  const statuses: Record<string, number> = {}
  let errors = 0
  let firstError: string | undefined
  const timingSums = new Map<string, number>()
  let timed = 0
  let answered = 0
  const t0 = performance.now()
  const measureFrom = t0 + spec.warmupMs
  const deadline = measureFrom + spec.measureMs

  const worker = async () => {
    while (performance.now() < deadline) {
      const req = await spec.next()
      const start = performance.now()
      let first = Number.NaN
      let status = 0
      let snippet = ""
      let timing: string | undefined
      try {
        const res = await pool.request({
          path: spec.path,
          method: spec.method ?? "POST",
          headers: req.headers,
          body: spec.method === "GET" ? undefined : req.body
        })
        status = res.statusCode
        const header = res.headers["server-timing"]
        timing = typeof header === "string" ? header : undefined
        for await (const chunk of res.body) {
          if (Number.isNaN(first)) first = performance.now()
          if (status >= 300 && snippet.length < 300) snippet += (chunk as Buffer).toString("utf8")
        }
      } catch (err) {
        status = -1
        snippet = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
      }
      const end = performance.now()
      answered++
      // Throughput = answers completed inside the window (a slow server's long calls still count once done).
      if (end < measureFrom || end > deadline) continue
      statuses[String(status)] = (statuses[String(status)] ?? 0) + 1
      const ok = spec.expectStatus === undefined ? status >= 200 && status < 300 : status === spec.expectStatus
      if (!ok) {
        errors++
        firstError ??= `${status} ${snippet.slice(0, 300)}`
        continue
      }
      latency.push(end - start)
      ttfb.push((Number.isNaN(first) ? end : first) - start)
      if (timing !== undefined) {
        timed++
        for (const { name, ms } of parseServerTiming(timing)) timingSums.set(name, (timingSums.get(name) ?? 0) + ms)
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: spec.concurrency }, worker))
  } finally {
    await pool.close().catch(() => {})
  }
  const lat = latency.sorted()
  const tt = ttfb.sorted()
  return {
    requests: lat.length,
    answered,
    rps: lat.length / (spec.measureMs / 1000),
    errors,
    statuses,
    latencyP50Ms: percentile(lat, 50),
    latencyP99Ms: percentile(lat, 99),
    ttfbP50Ms: percentile(tt, 50),
    ttfbP99Ms: percentile(tt, 99),
    firstError,
    serverTiming: timed === 0 ? undefined : Object.fromEntries([...timingSums].map(([name, sum]) => [name, sum / timed]))
  }
}
