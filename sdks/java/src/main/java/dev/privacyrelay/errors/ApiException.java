package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** The gateway answered an error status (the base of the status-specific exceptions; used as it is for a status none of them names). {@link #code()} is the gateway's error code, {@link #requestId()} its X-Request-Id. */
public class ApiException extends RelayException {
    public ApiException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
