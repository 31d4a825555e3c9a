package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Optional;

/** 429 rate_limited or quota_exceeded, with the gateway's Retry-After (retried up to the client's retries first). */
public final class RateLimitException extends ApiException {
    private final Duration retryAfter;

    public RateLimitException(String code, String message, String requestId, JsonNode details, Duration retryAfter) {
        super(code, message, 429, requestId, details);
        this.retryAfter = retryAfter;
    }

    /** How long the gateway asked to wait, when it said. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
