import { Context, Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Idempotency, type StoredResponse } from "../../services/Idempotency.ts"
import { requestBodySha256HexSync, sha256HexSync } from "../crypto/nodeSha256.ts"
import { requirePortal } from "./auth.ts"
import { readBodyBytes } from "./body.ts"

/**
 * How a streaming handler hands its finished transcript to the idempotency layer: `complete` with the exact
 * bytes sent (trailer included) when the stream ended whole, `abandon` otherwise (a stream that failed midway
 * is never stored). Undefined when the request carried no Idempotency-Key.
 */
export interface TranscriptSink {
  readonly complete: (transcript: Uint8Array, headers: Readonly<Record<string, string>>) => Effect.Effect<void>
  readonly abandon: Effect.Effect<void>
}
export const IdempotencyCapture = Context.Reference<TranscriptSink | undefined>("privacy-relay/IdempotencyCapture", {
  defaultValue: () => undefined
})

/** Response headers worth replaying: the body's type, receipts, and the streaming headers. */
const REPLAYED_HEADERS = [
  "cache-control",
  "x-accel-buffering",
  "x-service-receipt-v2",
  "x-service-receipt-v2-jti",
  "x-service-receipt-v3"
] as const

export const replayableHeaders = (headers: Readonly<Record<string, string | undefined>>, contentType: string | undefined) => {
  const out: Record<string, string> = {}
  if (contentType !== undefined) out["content-type"] = contentType
  for (const name of REPLAYED_HEADERS) {
    const v = headers[name]
    if (v !== undefined) out[name] = v
  }
  return out
}

/**
 * The request body's identity: SHA-256 of its JCS form when it is JSON (key order and spacing do not matter), else
 * of the bytes. For a relay body this is the attested egress_sha256, computed once for both checks.
 */
const bodyHashOf = (bytes: Uint8Array) => {
  try {
    return requestBodySha256HexSync(bytes)
  } catch {
    return sha256HexSync(bytes)
  }
}

const replay = (stored: StoredResponse) => {
  const { "content-type": contentType, ...rest } = stored.headers
  return HttpServerResponse.uint8Array(stored.body, {
    status: stored.status,
    contentType,
    headers: {
      ...rest,
      "x-service-idempotent-replay": "true",
      "idempotency-replayed": "true",
      ...(stored.streamed ? { "x-service-streamed": "true" } : {})
    }
  })
}

/**
 * Runs `handler` at most once per (scope, Idempotency-Key) within 24 h and replays its stored 2xx response to
 * duplicates. Requests without the header run as usual. `scope` binds the key to an organisation and route.
 */
export const withIdempotency = <E, R>(scope: string, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const key = request.headers["idempotency-key"]
    if (key === undefined) return yield* handler
    const bodyHash = bodyHashOf(yield* readBodyBytes)
    const admission = yield* (yield* Idempotency).admit({ scope, key, bodyHash })
    if (admission._tag === "Replay") return replay(admission.response)

    const sink: TranscriptSink = {
      complete: (transcript, headers) =>
        admission.complete({ status: 200, headers, body: transcript, streamed: true }),
      abandon: admission.abandon
    }
    const response = yield* handler.pipe(
      Effect.provideService(IdempotencyCapture, sink),
      Effect.onError(() => admission.abandon)
    )
    const body = response.body
    if (response.status < 200 || response.status >= 300) {
      yield* admission.abandon
    } else if (body._tag === "Uint8Array") {
      yield* admission.complete({
        status: response.status,
        headers: replayableHeaders(response.headers, body.contentType),
        body: body.body,
        streamed: false
      })
    } else if (body._tag !== "Stream") {
      // Empty or other bodies: store what there is (nothing), so the status replays.
      yield* admission.complete({ status: response.status, headers: replayableHeaders(response.headers, undefined), body: new Uint8Array(), streamed: false })
    }
    // A Stream body completes or abandons through the sink when it ends.
    return response
  })

/**
 * Idempotency for a portal write route: the key is bound to the caller's organisation, the operation (one name for
 * all aliases of a route) and the route's path parameters. Authentication runs first, so a bad token never reaches
 * the idempotency store; the handler authorises as usual.
 */
export const idempotentPortalRoute = <E, R>(
  ability: string,
  operation: string,
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.headers["idempotency-key"] === undefined) return yield* handler
    const portal = yield* requirePortal(ability)
    const params = yield* HttpRouter.params
    return yield* withIdempotency(`${portal.orgId}|${operation}|${JSON.stringify(params)}`, handler)
  })
