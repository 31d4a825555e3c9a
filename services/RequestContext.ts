import { Context } from "effect"

/**
 * Per-request facts set by the observability middleware and read by routes: the request id (sent upstream,
 * into receipts) and the trace (continued upstream with the same trace id).
 */
export interface RequestInfo {
  readonly requestId: string
  readonly traceId: string
  /** Our server span id for this request: the parent of the upstream call. */
  readonly spanId: string
  readonly sampled: boolean
  readonly startedAt: number
}

export const RequestContext = Context.Reference<RequestInfo>("privacy-relay/RequestContext", {
  defaultValue: () => ({ requestId: crypto.randomUUID(), traceId: "0".repeat(32), spanId: "0".repeat(16), sampled: false, startedAt: 0 })
})
