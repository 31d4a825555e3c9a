import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { ApiError } from "../../src/http/ApiError.ts"
import { MAX_REQUEST_BODY_BYTES } from "../../src/http/bodyLimit.ts"
import { parseJsonObject } from "../../src/http/validate.ts"

/** Largest request body the gateway reads (relay bodies included); larger ones get 413 `payload_too_large`. */
export const MAX_BODY_BYTES = MAX_REQUEST_BODY_BYTES

/** The raw request body bytes, exactly as received. */
export const readBodyBytes = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > MAX_BODY_BYTES) return yield* tooLarge()
  const buffer = yield* request.arrayBuffer.pipe(
    Effect.mapError(() => new ApiError({ status: 400, code: "invalid_request", message: "The request body could not be read." }))
  )
  if (buffer.byteLength > MAX_BODY_BYTES) return yield* tooLarge()
  return new Uint8Array(buffer)
})

const tooLarge = () =>
  Effect.fail(new ApiError({ status: 413, code: "payload_too_large", message: `Request bodies are limited to ${MAX_BODY_BYTES} bytes.` }))

const decoder = new TextDecoder("utf-8", { fatal: false })

/** A JSON object body (an empty body counts as `{}`); 400 `invalid_request` otherwise. */
export const readJsonObject = Effect.gen(function*() {
  const parsed = parseJsonObject(decoder.decode(yield* readBodyBytes))
  if (parsed instanceof ApiError) return yield* parsed
  return parsed
})
