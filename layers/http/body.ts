import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpServerRequest } from "effect/http"
import { ApiError } from "../../src/http/ApiError.ts"
import { MAX_REQUEST_BODY_BYTES } from "../../sdks/typescript/src/wire/bodyLimit.ts"
import { invalid, parseJsonObject } from "../../src/http/validate.ts"
import type { ApiRoute } from "./api/ApiRoute.ts"
import { bodyProblem } from "./api/bodyProblem.ts"

/** Largest request body the gateway reads (relay bodies included); larger ones get 413 `payload_too_large`. */
export const MAX_BODY_BYTES = MAX_REQUEST_BODY_BYTES

/**
 * The raw request body bytes, exactly as received. A declared Content-Length over the limit is refused before a byte
 * is read; a chunked body is counted as it arrives and refused the moment it passes the limit (the reader then
 * discards the rest, so the 413 still reaches a client that is writing), so no body larger than the limit is ever
 * held in memory.
 */
export const readBodyBytes = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > MAX_BODY_BYTES) return yield* tooLarge()
  const buffer = yield* request.arrayBuffer.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, MAX_BODY_SIZE),
    Effect.mapError((error) =>
      overLimit(error)
        ? tooLargeError()
        : new ApiError({ status: 400, code: "invalid_request", message: "The request body could not be read." })
    )
  )
  if (buffer.byteLength > MAX_BODY_BYTES) return yield* tooLarge()
  return new Uint8Array(buffer)
})

const MAX_BODY_SIZE = ByteSize.bytes(MAX_BODY_BYTES)

/** The platform's reader stops at MaxBodySize with a MaxBytesError, wrapped in its request error. */
const overLimit = (error: unknown): boolean => {
  for (let e = error, depth = 0; typeof e === "object" && e !== null && depth < 5; depth++) {
    if ((e as { readonly _tag?: unknown })._tag === "MaxBytesError") return true
    e = (e as { readonly cause?: unknown; readonly reason?: unknown }).cause ?? (e as { readonly reason?: unknown }).reason
  }
  return false
}

const tooLargeError = () =>
  new ApiError({ status: 413, code: "payload_too_large", message: `Request bodies are limited to ${MAX_BODY_BYTES} bytes.` })

const tooLarge = () => Effect.fail(tooLargeError())

const decoder = new TextDecoder("utf-8", { fatal: false })

/** A JSON object body (an empty body counts as `{}`); 400 `invalid_request` otherwise. */
export const readJsonObject = Effect.gen(function*() {
  const parsed = parseJsonObject(decoder.decode(yield* readBodyBytes))
  if (parsed instanceof ApiError) return yield* parsed
  return parsed
})

/**
 * A JSON object body that conforms to the route's documented request schema (the one docs/openapi.json shows), else
 * 400 `invalid_request` naming the field. Handlers still apply the checks a schema cannot state (a known model, a
 * plausible e-mail address) to the object it answers.
 */
export const readDocumentedBody = (route: ApiRoute) => {
  const schema = route.requestBody
  if (schema === undefined) throw new Error(`${route.method} ${route.path} documents no JSON request body`)
  return Effect.gen(function*() {
    const body = yield* readJsonObject
    const problem = bodyProblem(schema, body)
    if (problem !== undefined) return yield* invalid(problem.path, problem.message)
    return body
  })
}
