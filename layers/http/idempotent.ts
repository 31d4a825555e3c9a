import { Context, Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Idempotency, type StoredResponse } from "../../services/Idempotency.ts"
import { RequestContext } from "../../services/RequestContext.ts"
import { requestBodySha256HexSync, sha256HexSync } from "../crypto/nodeSha256.ts"
import { requirePortal } from "./auth.ts"
import { readBodyBytes } from "./body.ts"

/**
 * What a relay handler needs to make its call idempotent (undefined when the request carried no Idempotency-Key):
 * the key's identity, for the ResponseRecord it hands its settlement, which stores the response in the same
 * statement as the receipts and the debit. `stored` tells this wrapper that the settlement did (it then stores
 * nothing itself and frees the key's slot); a streamed handler, which answers before its settlement, instead
 * runs `release` when its stream ends, stored or not.
 */
export interface IdempotentCall {
  readonly scope: string
  readonly key: string
  readonly bodyHash: string
  readonly stored: Effect.Effect<void>
  readonly release: Effect.Effect<void>
}
export const IdempotentCallRef = Context.Reference<IdempotentCall | undefined>("privacy-relay/IdempotentCall", {
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
export const bodyHashOf = (bytes: Uint8Array) => {
  try {
    return requestBodySha256HexSync(bytes)
  } catch {
    return sha256HexSync(bytes)
  }
}

export const replay = (stored: StoredResponse) => {
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
    const { stages } = yield* RequestContext
    stages.end("idempotency")
    if (admission._tag === "Replay") return replay(admission.response)

    let storedBySettlement = false
    const call: IdempotentCall = {
      scope,
      key,
      bodyHash,
      stored: Effect.sync(() => {
        storedBySettlement = true
      }),
      release: admission.abandon
    }
    const response = yield* handler.pipe(
      Effect.provideService(IdempotentCallRef, call),
      Effect.onError(() => admission.abandon)
    )
    const body = response.body
    // Nothing left to store: the settlement stored it, or it is not a 2xx (never stored).
    if (storedBySettlement || response.status < 200 || response.status >= 300) {
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
    // A Stream body (a streamed relay call) releases the key when it ends; its settlement stored the transcript.
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
