package dev.privacyrelay;

/**
 * Per-call settings. {@code idempotencyKey}: sent on every attempt of the call (default a fresh UUID per call, reused
 * by its retries); with your own key the aliases derive from it under the device secret, so a retry you make
 * yourself sends the same bytes and the gateway answers it once. {@code traceparent}: the W3C trace context to
 * propagate (default a fresh one per call).
 */
public record CallOptions(String idempotencyKey, String traceparent) {
    public static final CallOptions NONE = new CallOptions(null, null);

    public static CallOptions idempotencyKey(String key) {
        return new CallOptions(key, null);
    }

    public CallOptions withTraceparent(String value) {
        return new CallOptions(idempotencyKey, value);
    }
}
