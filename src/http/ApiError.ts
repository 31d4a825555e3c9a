import { Data } from "effect"

interface ApiErrorFields {
  readonly status: number
  readonly code: string
  readonly message: string
  /** Extra fields of the error object, e.g. `type`, `required`, `granted`, `details`. */
  readonly extra?: Readonly<Record<string, unknown>>
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * The one error every route answers with: `{ "error": { "code", "message", ...extra } }`.
 * `code` is stable and documented (docs/errors.md); `message` is for humans and never echoes secrets or content.
 */
export class ApiError extends Data.TaggedError("ApiError")<ApiErrorFields> {
  constructor(fields: ApiErrorFields) {
    super(fields)
    // `Error` makes `message` a non-enumerable own property, so `{ ...error }` or a JSON log of the error silently
    // lost it (issue 14: every refused relay call answered an empty message). Make it an ordinary field like the rest.
    Object.defineProperty(this, "message", { value: fields.message, enumerable: true, writable: true, configurable: true })
  }

  /** The same error with more response headers (a copy: errors are values). */
  withHeaders(headers: Readonly<Record<string, string>>): ApiError {
    return new ApiError({
      status: this.status,
      code: this.code,
      message: this.message,
      extra: this.extra,
      headers: { ...this.headers, ...headers }
    })
  }

  toBody() {
    return errorEnvelope(this.code, this.message, this.extra)
  }
}

/**
 * The wire body of every error. It takes the message explicitly (never from a spread of an Error), and a missing or
 * blank message is a bug we would rather see in a test than ship: it is replaced by a message naming the code.
 */
export const errorEnvelope = (code: string, message: string, extra?: Readonly<Record<string, unknown>>) => ({
  error: { ...extra, code, message: typeof message === "string" && message.trim() !== "" ? message : `Request refused (${code}).` }
})

export const invalidRequest = (message: string, path?: string) =>
  new ApiError({ status: 400, code: "invalid_request", message, extra: path === undefined ? undefined : { details: { path } } })

export const notFound = () => new ApiError({ status: 404, code: "not_found", message: "No route matches this method and path." })
