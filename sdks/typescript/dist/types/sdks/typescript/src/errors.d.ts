/**
 * Typed errors of the SDK's Promise face. Every failure is a RelayError carrying `status` (0 when no HTTP answer
 * was received), a stable `code` (the gateway's error code, or one of the SDK's own below) and `requestId` (the
 * gateway's X-Request-Id when there was an answer). Subclasses let callers catch a family with `instanceof`.
 *
 * SDK codes: `configuration_error` (bad gateway URL, key file readable by others, ...), `gateway_identity_failed`
 * (the URL does not answer the gateway identity probe), `connection_error`, `timeout`, `aborted`,
 * `name_model_unavailable` (fail-closed: nothing was sent), `invalid_request` (a body the engine cannot tokenise),
 * `stream_error` (malformed SSE from the gateway, or a stream cut before its end).
 */
export declare class RelayError extends Error {
    readonly status: number;
    readonly code: string;
    readonly requestId: string | undefined;
    /** The error object of the gateway's answer (`{ code, message, ... }`), when there was one. */
    readonly body: Readonly<Record<string, unknown>> | undefined;
    constructor(input: {
        readonly status: number;
        readonly code: string;
        readonly message: string;
        readonly requestId?: string | undefined;
        readonly body?: Readonly<Record<string, unknown>> | undefined;
        readonly cause?: unknown;
    });
}
/** 400: the gateway (or the engine) refused the request's shape. */
export declare class InvalidRequestError extends RelayError {
}
/** 401: missing, unknown, revoked or expired key (or portal credentials). */
export declare class AuthenticationError extends RelayError {
}
/** 402: the wallet has no available balance. */
export declare class InsufficientBalanceError extends RelayError {
}
/** 403: scope, ability, engine or model not allowed. */
export declare class PermissionDeniedError extends RelayError {
}
/** 404: unknown resource or model. */
export declare class NotFoundError extends RelayError {
}
/** 409: conflict (idempotency key reuse, account exists, ...). */
export declare class ConflictError extends RelayError {
}
/** 413: body over the gateway's limit. */
export declare class PayloadTooLargeError extends RelayError {
}
/** 428: the gateway did not accept the on-device attestation (nothing was forwarded). */
export declare class PretokenisationRequiredError extends RelayError {
}
/** 429: rate limit or quota; `retryAfterSeconds` from Retry-After. */
export declare class RateLimitError extends RelayError {
    readonly retryAfterSeconds: number | undefined;
    constructor(input: ConstructorParameters<typeof RelayError>[0] & {
        readonly retryAfterSeconds?: number | undefined;
    });
}
/** 5xx: the gateway or the upstream provider failed. */
export declare class ServerError extends RelayError {
}
/** No HTTP answer: connection refused or reset, DNS, TLS. */
export declare class ConnectionError extends RelayError {
}
/** The call took longer than `timeoutMs`. */
export declare class TimeoutError extends RelayError {
}
/** The caller's AbortSignal fired. */
export declare class AbortedError extends RelayError {
}
/** Client-side setting or environment problem (gateway URL, key file, ...). Nothing was sent. */
export declare class ConfigurationError extends RelayError {
}
/** The gateway URL does not answer the gateway identity probe: refusing to send anything there. */
export declare class GatewayIdentityError extends RelayError {
}
/** The name model could not run and the client is fail-closed: nothing was sent. */
export declare class NameModelUnavailableError extends RelayError {
}
/** Malformed SSE from the gateway, or a stream that ended before its end. */
export declare class StreamError extends RelayError {
}
/** Retry-After in seconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export declare const retryAfterSeconds: (value: string | null, now?: number) => number | undefined;
/**
 * The typed error for a gateway answer with status >= 400. Reads our envelope `{ error: { code, message } }`,
 * Anthropic's `{ type: "error", error: { type, message } }` and OAuth's `{ error, error_description }`.
 */
export declare const errorFromAnswer: (status: number, headers: Headers, bodyText: string) => RelayError;
