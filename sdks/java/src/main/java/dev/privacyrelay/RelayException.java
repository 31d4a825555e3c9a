package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Every failure of the SDK: a stable {@code code} (the gateway's error codes, or the engine's), the HTTP status it
 * maps to (0 when no HTTP answer is involved), the gateway's request id when there was one, and structured details
 * (for an egress refusal, {@code details.path}: the JSON pointer of the refused field).
 */
public class RelayException extends RuntimeException {
    private final String code;
    private final int status;
    private final String requestId;
    private final JsonNode details;

    public RelayException(String code, String message, int status, String requestId, JsonNode details) {
        super(message);
        this.code = code;
        this.status = status;
        this.requestId = requestId;
        this.details = details;
    }

    public String code() {
        return code;
    }

    public int status() {
        return status;
    }

    public String requestId() {
        return requestId;
    }

    /** Structured details, or null. */
    public JsonNode details() {
        return details;
    }
}
