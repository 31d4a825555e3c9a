import { Context } from "effect"
import { StageClock } from "../src/http/serverTiming.ts"

/**
 * What the access-log line says about who called which route, filled in while the request runs: the route template
 * by the route middleware, the caller by authentication. Never content.
 */
export interface AccessFacts {
  route: string | null
  keyPrefix: string | null
  orgId: string | null
}

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
  /** The request's stages so far, for its Server-Timing header: routes call `stages.end(name)` as each ends. */
  readonly stages: StageClock
  /** Filled in as the request runs; read once by the access log when it ends. */
  readonly access: AccessFacts
}

export const RequestContext = Context.Reference<RequestInfo>("privacy-relay/RequestContext", {
  defaultValue: () => ({
    requestId: crypto.randomUUID(),
    traceId: "0".repeat(32),
    spanId: "0".repeat(16),
    sampled: false,
    startedAt: 0,
    stages: new StageClock(() => performance.now(), performance.now()),
    access: { route: null, keyPrefix: null, orgId: null }
  })
})
