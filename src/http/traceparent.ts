/** W3C Trace Context (`traceparent`), version 00. */
import { randomFillSync } from "node:crypto"

export interface TraceContext {
  readonly traceId: string
  /** The caller's span id (our parent), undefined when the trace starts here. */
  readonly parentSpanId: string | undefined
  /** Whether the caller asked for sampling (flag 01). */
  readonly sampledFlag: boolean
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/**
 * Random bytes for ids, drawn from a pool refilled 4 KiB at a time: every request takes a trace id and a span id, and
 * a WebCrypto `getRandomValues` call plus a hex loop per id cost ~18 µs of the gateway's ~0.2 ms per request (Linux
 * perf, `GET /healthz` at c=1); one `randomFillSync` per ~170 requests and Buffer's hex encoder cost ~1 µs.
 */
const POOL_BYTES = 4096
const pool = Buffer.allocUnsafe(POOL_BYTES)
let poolOffset = POOL_BYTES

const randomHex = (bytes: number): string => {
  if (poolOffset + bytes > POOL_BYTES) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const hex = pool.toString("hex", poolOffset, poolOffset + bytes)
  poolOffset += bytes
  // An all-zero id is invalid in W3C Trace Context (a 2^-64 chance at worst): draw again.
  return /^0+$/.test(hex) ? randomHex(bytes) : hex
}

export const newTraceId = () => randomHex(16)
export const newSpanId = () => randomHex(8)

/** An invalid or absent header starts a new trace (the spec: accept and continue, never fail the request). */
export const parseTraceparent = (header: string | undefined): TraceContext => {
  const m = header === undefined ? null : TRACEPARENT.exec(header.trim().toLowerCase())
  if (m === null || m[1] === "ff" || /^0+$/.test(m[2]) || /^0+$/.test(m[3])) {
    return { traceId: newTraceId(), parentSpanId: undefined, sampledFlag: false }
  }
  return { traceId: m[2], parentSpanId: m[3], sampledFlag: (parseInt(m[4], 16) & 1) === 1 }
}

export const formatTraceparent = (traceId: string, spanId: string, sampled: boolean) =>
  `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`
