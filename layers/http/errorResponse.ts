import { Cause, Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { ApiError, notFound } from "../../src/http/ApiError.ts"
import { domainErrorToApiError, isDomainError } from "./domainErrors.ts"

export const apiErrorResponse = (error: ApiError) =>
  HttpServerResponse.jsonUnsafe(error.toBody(), { status: error.status, headers: error.headers })

const isTagged = (u: unknown, tag: string): boolean => typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === tag

/**
 * Turns any failure of a route into our error envelope: ApiError as itself, a service's own tagged error as
 * domainErrors.ts maps it, an unmatched route as 404
 * `not_found`, an unparsable body as 400 `invalid_request`, anything else as 500 `internal_error` (logged with
 * the request id; no stack or internals ever reach the client).
 */
export const causeToResponse = (cause: Cause.Cause<unknown>, requestId: string) => {
  const failure = cause.reasons.find(Cause.isFailReason)?.error
  if (failure instanceof ApiError) return Effect.succeed(apiErrorResponse(failure))
  if (isDomainError(failure)) return Effect.succeed(apiErrorResponse(domainErrorToApiError(failure)))
  const reason = (failure as { reason?: unknown } | undefined)?.reason
  if (isTagged(failure, "RouteNotFound") || isTagged(reason, "RouteNotFound")) return Effect.succeed(apiErrorResponse(notFound()))
  if (isTagged(failure, "RequestParseError") || isTagged(failure, "HttpServerError")) {
    return Effect.succeed(apiErrorResponse(new ApiError({ status: 400, code: "invalid_request", message: "The request could not be read." })))
  }
  if (Cause.hasInterruptsOnly(cause)) {
    return Effect.succeed(HttpServerResponse.empty({ status: 499 }))
  }
  return Effect.logError("unhandled failure", { request_id: requestId, cause: Cause.pretty(cause) }).pipe(
    Effect.as(
      apiErrorResponse(
        new ApiError({ status: 500, code: "internal_error", message: `Internal error; quote request id ${requestId} to support.` })
      )
    )
  )
}
