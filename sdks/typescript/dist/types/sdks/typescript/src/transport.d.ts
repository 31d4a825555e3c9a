/** How a call is retried: on 429, 5xx and network errors, with exponential backoff and full jitter. */
export interface RetryPolicy {
    /** Retries after the first attempt (default 2). */
    readonly retries: number;
    /** First backoff step in ms (default 500); doubled per attempt, capped at `maxDelayMs`. */
    readonly baseDelayMs: number;
    readonly maxDelayMs: number;
}
export declare const DEFAULT_RETRY_POLICY: RetryPolicy;
export interface SendOptions {
    readonly signal?: AbortSignal | undefined;
    readonly timeoutMs?: number | undefined;
    /** Retry this call? Only idempotent reads and calls that carry an Idempotency-Key are retried. */
    readonly retry: boolean;
}
export interface Transport {
    /** One logical call: retried per the policy; resolves with the first answer < 400 or rejects with a RelayError. */
    readonly send: (url: string, init: RequestInit, options: SendOptions) => Promise<Response>;
}
/** A W3C traceparent for a new trace (the gateway continues it and returns it in its logs and spans). */
export declare const newTraceparent: () => string;
export declare const createTransport: (fetchImpl: typeof fetch, policy: RetryPolicy, defaultTimeoutMs: number) => Transport;
