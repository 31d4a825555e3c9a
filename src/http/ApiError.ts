import { Data } from "effect"

/**
 * The one error every route answers with: `{ "error": { "code", "message", ...extra } }`.
 * `code` is stable and documented (docs/errors.md); `message` is for humans and never echoes secrets or content.
 */
export class ApiError extends Data.TaggedError("ApiError")<{
  readonly status: number
  readonly code: string
  readonly message: string
  /** Extra fields of the error object, e.g. `type`, `required`, `granted`, `details`. */
  readonly extra?: Readonly<Record<string, unknown>>
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers?: Readonly<Record<string, string>>
}> {
  toBody() {
    return { error: { code: this.code, message: this.message, ...this.extra } }
  }
}

export const invalidRequest = (message: string, path?: string) =>
  new ApiError({ status: 400, code: "invalid_request", message, extra: path === undefined ? undefined : { details: { path } } })

export const notFound = () => new ApiError({ status: 404, code: "not_found", message: "No route matches this method and path." })
