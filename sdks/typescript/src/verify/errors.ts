// Typed errors of offline verification. Each has a stable `code` callers can branch on; messages say what is
// wrong and never contain a secret.

/** Why the receipt keys could not be obtained. */
export type JwksErrorCode =
  /** gatewayUrl is not https (or plain http to a loopback address). */
  | "invalid_gateway_url"
  /** The gateway could not be reached, or answered something other than 200. */
  | "jwks_unreachable"
  /** What was given or fetched is not a JWKS of receipt keys. */
  | "jwks_invalid"

/**
 * The receipt keys are not available, so nothing could be verified. Thrown rather than reported as an invalid
 * receipt: an unreachable gateway says nothing about the receipt.
 */
export class JwksError extends Error {
  readonly _tag = "JwksError"
  readonly code: JwksErrorCode
  /** The HTTP status the gateway answered, when it answered. */
  readonly status: number | undefined
  constructor(code: JwksErrorCode, message: string, options: { readonly status?: number; readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = "JwksError"
    this.code = code
    this.status = options.status
  }
}

export type WebhookVerificationCode =
  /** Neither X-Service-Signature (v1) nor X-Service-Webhook-Signature (v0) is present. */
  | "missing_headers"
  /** The signature header is present but not in its scheme's form (`t=<unix>,v1=<hex>` / `sha256=<hex>`). */
  | "malformed_header"
  /** The signature does not match the body under this secret (tampered body, wrong or rotated secret). */
  | "bad_signature"
  /** The signature matches but the timestamp is further from the receiver's clock than the tolerance. */
  | "stale_timestamp"
  /** The body is not JSON with an integer `timestamp` (needed by v0), or is not UTF-8. */
  | "malformed_body"
  /** No secret was given. */
  | "missing_secret"

/** A webhook delivery that must not be trusted; `code` says why. */
export class WebhookVerificationError extends Error {
  readonly _tag = "WebhookVerificationError"
  readonly code: WebhookVerificationCode
  constructor(code: WebhookVerificationCode, message: string) {
    super(message)
    this.name = "WebhookVerificationError"
    this.code = code
  }
}
