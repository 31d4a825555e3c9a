/** W3C Trace Context (`traceparent`), version 00. */
export interface TraceContext {
  readonly traceId: string
  /** The caller's span id (our parent), undefined when the trace starts here. */
  readonly parentSpanId: string | undefined
  /** Whether the caller asked for sampling (flag 01). */
  readonly sampledFlag: boolean
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

const randomHex = (bytes: number) => {
  const b = crypto.getRandomValues(new Uint8Array(bytes))
  let s = ""
  for (const x of b) s += x.toString(16).padStart(2, "0")
  return s
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
