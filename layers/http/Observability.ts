import { Effect, LogLevel, Tracer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../../services/AppConfig.ts"
import { GatewayMetrics } from "../../services/GatewayMetrics.ts"
import { PortalTokens } from "../../services/PortalTokens.ts"
import { type AccessFacts, RequestContext } from "../../services/RequestContext.ts"
import { pickRequestId } from "../../src/http/requestId.ts"
import { StageClock } from "../../src/http/serverTiming.ts"
import { formatTraceparent, newSpanId, parseTraceparent } from "../../src/http/traceparent.ts"
import { causeToResponse } from "./errorResponse.ts"
import { endServerSpan, startServerSpan } from "./serverSpan.ts"
import { drainUnreadBody } from "./lingeringBody.ts"

/** Routes anyone may call from any origin (no bearer auth): CORS `*`. */
const PUBLIC_CROSS_ORIGIN = new Set([
  "/api/v1/self-service/key",
  "/api/v1/receipts/verify",
  "/api/.well-known/service-receipt-pubkeys.jwks",
  "/api/.well-known/service-receipt-pubkey.pem"
])

const CORS_ALLOW_HEADERS =
  "authorization, content-type, idempotency-key, x-request-id, traceparent, x-service-engine, x-service-attestation, x-csrf-token"
const CORS_EXPOSE_HEADERS =
  "x-request-id, x-response-time, server-timing, traceparent, x-service-receipt-v2, x-service-receipt-v2-jti, x-service-receipt-failed, x-service-receipt-v3, x-service-idempotent-replay, retry-after, ratelimit, ratelimit-policy"

/**
 * Global middleware: every response the application produces (success, error, 404, OPTIONS, streaming) gets
 * `X-Request-Id`, `X-Response-Time`, `Server-Timing` (the request's stages; SERVER_TIMING=off drops it) and
 * `traceparent`; every failure becomes our error envelope; bearer routes are exposed cross-origin only to
 * PORTAL_ORIGIN; every request, sampled or not, is logged as one JSON access line at info (accessLogFields) and
 * counted in GatewayMetrics (GET /metrics).
 */
export const ObservabilityMiddleware = HttpRouter.middleware(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const portalTokens = yield* PortalTokens
    const metrics = yield* GatewayMetrics
    // The error channel is declared `any`: this middleware handles every failure, which the router's types
    // only allow for an open error type.
    return (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, any>): Effect.Effect<HttpServerResponse.HttpServerResponse, any, HttpServerRequest.HttpServerRequest> => Effect.gen(function*() {
      const startedAt = performance.now()
      const request = yield* HttpServerRequest.HttpServerRequest
      const headers = request.headers
      const requestId = pickRequestId(headers["x-request-id"])
      const trace = parseTraceparent(headers["traceparent"])
      const forced = headers["x-service-force-trace"] === "1" && (yield* isAdminCaller(portalTokens, headers["authorization"]))
      let sampled = trace.sampledFlag || forced || Math.random() < config.traceSampleRatio
      // A sampled request's ids are those of a real, exported server span (serverSpan.ts); an unsampled one's are
      // minted from the pool and nothing is built.
      let serverSpan = sampled ? startServerSpan(yield* Effect.tracer, trace, request.method, startedAt) : undefined
      let traceId = serverSpan?.traceId ?? trace.traceId
      let spanId = serverSpan?.spanId ?? newSpanId()
      const path = request.url.split("?")[0]
      const origin = headers["origin"]
      const stages = new StageClock(() => performance.now(), startedAt)
      const access: AccessFacts = { route: null, keyPrefix: null, orgId: null }

      const response = request.method === "OPTIONS"
        ? HttpServerResponse.empty({ status: 204 })
        : yield* httpEffect.pipe(
          // An unsampled request's spans are never exported: no-op spans instead of building them (clock reads,
          // attributes) inside every layer it touches (SQL statements, batches).
          sampled ? (effect) => effect : Effect.withTracerEnabled(false),
          Effect.withParentSpan(serverSpan ?? Tracer.externalSpan({ traceId, spanId, sampled })),
          Effect.provideService(RequestContext, { requestId, traceId, spanId, sampled, startedAt, stages, access }),
          Effect.catchCause((cause) => causeToResponse(cause, requestId))
        )

      if (response.status >= 500 && !sampled) {
        // Every 5xx is traced. Its children ran untraced, so the server span is exported alone, with fresh ids
        // (the upstream, if called, was told 00 and records nothing to hang off the minted id).
        sampled = true
        serverSpan = startServerSpan(yield* Effect.tracer, trace, request.method, startedAt)
        traceId = serverSpan.traceId
        spanId = serverSpan.spanId
      }
      const endedAt = performance.now()
      const elapsed = endedAt - startedAt
      if (serverSpan !== undefined) {
        endServerSpan(serverSpan, { method: request.method, route: access.route, status: response.status, requestId }, endedAt)
      }
      const out: Record<string, string> = {
        "x-request-id": requestId,
        "x-response-time": `${Math.max(0, Math.round(elapsed))}ms`,
        traceparent: formatTraceparent(traceId, spanId, sampled),
        vary: "Origin"
      }
      // For a stream, the stages until its headers were sent (its time to first byte).
      if (config.serverTiming) out["server-timing"] = stages.header(elapsed)
      if (origin !== undefined) {
        if (config.portalOrigin !== undefined && origin === config.portalOrigin) {
          out["access-control-allow-origin"] = origin
          out["access-control-allow-credentials"] = "true"
        } else if (PUBLIC_CROSS_ORIGIN.has(path)) {
          out["access-control-allow-origin"] = "*"
        }
        if (out["access-control-allow-origin"] !== undefined) {
          out["access-control-expose-headers"] = CORS_EXPOSE_HEADERS
          if (request.method === "OPTIONS") {
            out["access-control-allow-methods"] = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
            out["access-control-allow-headers"] = CORS_ALLOW_HEADERS
            out["access-control-max-age"] = "600"
          }
        }
      }
      metrics.record({ method: request.method, route: access.route, status: response.status, seconds: elapsed / 1000 })
      // An error decided before the body was read (413, 401, ...): take the rest of the body first (bounded), so the
      // client can finish writing and read this answer instead of a reset connection (lingeringBody.ts).
      if (response.status >= 400) yield* drainUnreadBody(request)
      // Built only when it will be written: below LOG_LEVEL=info the line and its annotations cost ~10 us a request
      // for nothing (in-process, filtered logInfo with 12 annotations vs none).
      if (yield* LogLevel.isEnabled("Info")) {
        yield* Effect.logInfo("request").pipe(
          Effect.annotateLogs(accessLogFields({
            requestId,
            method: request.method,
            path,
            status: response.status,
            elapsedMs: elapsed,
            access,
            trace: { traceId, spanId, parentSpanId: trace.parentSpanId ?? null, sampled }
          }))
        )
      }
      return HttpServerResponse.setHeaders(response, out)
    })
  }),
  { global: true }
)

/**
 * The access line's fields: who called which route and how it ended. Never content: no body, no query string (a
 * verification link carries its token there), no header values; an unmatched path is logged without its query and
 * cut to 200 characters. For a stream the status and duration are those of its headers (its time to first byte).
 */
export const accessLogFields = (input: {
  readonly requestId: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly elapsedMs: number
  readonly access: AccessFacts
  readonly trace: { readonly traceId: string; readonly spanId: string; readonly parentSpanId: string | null; readonly sampled: boolean }
}) => ({
  request_id: input.requestId,
  method: input.method,
  route: input.access.route,
  ...(input.access.route === null ? { path: input.path.slice(0, 200) } : {}),
  status: input.status,
  duration_ms: Math.round(input.elapsedMs * 1000) / 1000,
  key_prefix: input.access.keyPrefix,
  org_id: input.access.orgId,
  trace_id: input.trace.traceId,
  span_id: input.trace.spanId,
  parent_span_id: input.trace.parentSpanId,
  sampled: input.trace.sampled
})

/**
 * Route middleware (provided to the route layers): records the matched route's template (`/api/v1/receipts/:jti`)
 * for the access line, which the global middleware cannot see because routing happens inside it.
 */
export const RouteTemplateMiddleware = HttpRouter.middleware((httpEffect) =>
  Effect.gen(function*() {
    const { route } = yield* HttpRouter.RouteContext
    const { access } = yield* RequestContext
    access.route = route.path
    return yield* httpEffect
  })
).layer

const isAdminCaller = (portalTokens: PortalTokens["Service"], authorization: string | undefined) => {
  const token = authorization?.startsWith("Bearer ") ? authorization.slice(7).trim() : undefined
  if (token === undefined || !token.startsWith("spt_")) return Effect.succeed(false)
  return portalTokens.authenticate(token).pipe(
    Effect.map((p) => p.abilities.includes("ability:admin")),
    Effect.orElseSucceed(() => false)
  )
}
