import { Context, Exit, Option, Tracer } from "effect"
import type { TraceContext } from "../../src/http/traceparent.ts"

/**
 * The gateway's own server span: a real span of the current Tracer (the OTLP exporter when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set), so the span id the response's and the upstream's `traceparent` carry is a
 * span the trace viewer has. Child of the caller's span when a traceparent came in, else the root of a new trace.
 * Built only for a sampled request: an unsampled one keeps its pool-minted ids and costs nothing here.
 */
export const startServerSpan = (tracer: Tracer.Tracer, trace: TraceContext, method: string, startedAtMs: number): Tracer.Span =>
  tracer.span({
    name: method,
    parent: trace.parentSpanId === undefined
      ? Option.none()
      : Option.some(Tracer.externalSpan({ traceId: trace.traceId, spanId: trace.parentSpanId, sampled: true })),
    annotations: Context.empty(),
    links: [],
    startTime: wallClockNanos(startedAtMs),
    kind: "server",
    root: trace.parentSpanId === undefined,
    sampled: true
  })

/** Ids, method, route and status only (content-blind: no path beyond the route template, no header, no body). */
export const endServerSpan = (
  span: Tracer.Span,
  facts: { readonly method: string; readonly route: string | null; readonly status: number; readonly requestId: string },
  endedAtMs: number
) => {
  // OTel names a server span `{method} {route}` once the route is known; Effect's Span has no rename, and its
  // spans keep the name in a plain field read at export time.
  if (facts.route !== null) (span as { name: string }).name = `${facts.method} ${facts.route}`
  span.attribute("http.request.method", facts.method)
  if (facts.route !== null) span.attribute("http.route", facts.route)
  span.attribute("http.response.status_code", facts.status)
  span.attribute("request_id", facts.requestId)
  // OpenTelemetry marks a server span as failed on 5xx only.
  span.end(wallClockNanos(endedAtMs), facts.status >= 500 ? Exit.fail(new ServerErrorStatus(facts.status)) : Exit.void)
}

class ServerErrorStatus extends Error {
  constructor(status: number) {
    super(`HTTP ${status}`)
    this.name = "HttpServerError"
    this.stack = `${this.name}: ${this.message}`
  }
}

const wallClockNanos = (performanceMs: number) => BigInt(Math.round((performance.timeOrigin + performanceMs) * 1_000_000))
