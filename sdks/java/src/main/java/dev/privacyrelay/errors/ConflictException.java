package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** 409: an Idempotency-Key reused with another body, or a request still in flight under it. */
public class ConflictException extends ApiException {
    public ConflictException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
