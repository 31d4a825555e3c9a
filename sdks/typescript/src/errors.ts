/**
 * Typed errors of the SDK's Promise face. Every failure is a RelayError carrying `status` (0 when no HTTP answer
 * was received), a stable `code` (the gateway's error code, or one of the SDK's own below) and `requestId` (the
 * gateway's X-Request-Id when there was an answer). Subclasses let callers catch a family with `instanceof`.
 *
 * SDK codes: `configuration_error` (bad gateway URL, key file readable by others, ...), `gateway_identity_failed`
 * (the URL does not answer the gateway identity probe), `connection_error`, `timeout`, `aborted`,
 * `name_model_unavailable` (fail-closed: nothing was sent), `invalid_request` (a body the engine cannot tokenise),
 * `stream_error` (malformed SSE from the gateway, or a stream cut before its end), `conversation_busy` (ConflictError:
 * a conversation's next turn before its previous one finished; nothing sent), and the egress policy's
 * refusals (EgressRefusedError, nothing sent): `unsupported_field`, `unsupported_content`, `nesting_too_deep`.
 */
export class RelayError extends Error {
  readonly status: number
  readonly code: string
  readonly requestId: string | undefined
  /** The error object of the gateway's answer (`{ code, message, ... }`), when there was one. */
  readonly body: Readonly<Record<string, unknown>> | undefined

  constructor(input: {
    readonly status: number
    readonly code: string
    readonly message: string
    readonly requestId?: string | undefined
    readonly body?: Readonly<Record<string, unknown>> | undefined
    readonly cause?: unknown
  }) {
    super(input.message, input.cause === undefined ? undefined : { cause: input.cause })
    this.name = new.target.name
    this.status = input.status
    this.code = input.code
    this.requestId = input.requestId
    this.body = input.body
  }
}

/** 400: the gateway (or the engine) refused the request's shape. */
export class InvalidRequestError extends RelayError {}
/** 401: missing, unknown, revoked or expired key (or portal credentials). */
export class AuthenticationError extends RelayError {}
/** 402: the wallet has no available balance. */
export class InsufficientBalanceError extends RelayError {}
/** 403: scope, ability, engine or model not allowed. */
export class PermissionDeniedError extends RelayError {}
/** 404: unknown resource or model. */
export class NotFoundError extends RelayError {}
/** 409: conflict (idempotency key reuse, account exists, ...). */
export class ConflictError extends RelayError {}
/** 413: body over the gateway's limit. */
export class PayloadTooLargeError extends RelayError {}
/** 428: the gateway did not accept the on-device attestation (nothing was forwarded). */
export class PretokenisationRequiredError extends RelayError {}
/** 429: rate limit or quota; `retryAfterSeconds` from Retry-After. */
export class RateLimitError extends RelayError {
  readonly retryAfterSeconds: number | undefined
  constructor(input: ConstructorParameters<typeof RelayError>[0] & { readonly retryAfterSeconds?: number | undefined }) {
    super(input)
    this.retryAfterSeconds = input.retryAfterSeconds
  }
}
/** 5xx: the gateway or the upstream provider failed. */
export class ServerError extends RelayError {}
/** No HTTP answer: connection refused or reset, DNS, TLS. */
export class ConnectionError extends RelayError {}
/** The call took longer than `timeoutMs`. */
export class TimeoutError extends RelayError {}
/** The caller's AbortSignal fired. */
export class AbortedError extends RelayError {}
/** Client-side setting or environment problem (gateway URL, key file, ...). Nothing was sent. */
export class ConfigurationError extends RelayError {}
/** The gateway URL does not answer the gateway identity probe: refusing to send anything there. */
export class GatewayIdentityError extends RelayError {}
/** The name model could not run and the client is fail-closed: nothing was sent. */
export class NameModelUnavailableError extends RelayError {}
/**
 * The egress policy refused the body on the device, before anything was sent (status 0): a field or part type the
 * policy refuses or does not name (`unsupported_field`: name its path in `passthroughPaths` to send it untokenised),
 * media (`unsupported_content`: see `mediaPolicy`), or nesting past 64 levels (`nesting_too_deep`). `path` is the
 * JSON pointer of the value; `body.details` holds the path, the media kind and the setting that would allow it.
 */
export class EgressRefusedError extends InvalidRequestError {
  get path(): string {
    return String((this.body?.details as Record<string, unknown> | undefined)?.path ?? "")
  }
}
/** Malformed SSE from the gateway, or a stream that ended before its end. */
export class StreamError extends RelayError {}

const byStatus = (status: number): typeof RelayError => {
  switch (status) {
    case 400:
      return InvalidRequestError
    case 401:
      return AuthenticationError
    case 402:
      return InsufficientBalanceError
    case 403:
      return PermissionDeniedError
    case 404:
      return NotFoundError
    case 409:
      return ConflictError
    case 413:
      return PayloadTooLargeError
    case 428:
      return PretokenisationRequiredError
    default:
      return status >= 500 ? ServerError : RelayError
  }
}

/** Retry-After in seconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export const retryAfterSeconds = (value: string | null, now = Date.now()): number | undefined => {
  if (value === null || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000)
}

/**
 * The typed error for a gateway answer with status >= 400. Reads our envelope `{ error: { code, message } }`,
 * Anthropic's `{ type: "error", error: { type, message } }` and OAuth's `{ error, error_description }`.
 */
export const errorFromAnswer = (status: number, headers: Headers, bodyText: string): RelayError => {
  let parsed: unknown
  try {
    parsed = JSON.parse(bodyText)
  } catch {
    parsed = undefined
  }
  const record = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {}
  const inner = typeof record.error === "object" && record.error !== null ? (record.error as Record<string, unknown>) : undefined
  const code = typeof inner?.code === "string" ? inner.code : typeof inner?.type === "string" ? inner.type : typeof record.error === "string" ? record.error : `http_${status}`
  const message = typeof inner?.message === "string" && inner.message !== ""
    ? inner.message
    : typeof record.error_description === "string"
    ? record.error_description
    : `The gateway answered ${status}.`
  const requestId = headers.get("x-request-id") ?? undefined
  const input = { status, code, message, requestId, body: inner ?? (parsed === undefined ? undefined : record) }
  if (status === 429) return new RateLimitError({ ...input, retryAfterSeconds: retryAfterSeconds(headers.get("retry-after")) })
  const ErrorClass = byStatus(status)
  return new ErrorClass(input)
}
