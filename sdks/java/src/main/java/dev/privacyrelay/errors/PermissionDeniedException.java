package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** 403: insufficient_scope, engine_untrusted, model_not_allowed, insufficient_ability. */
public class PermissionDeniedException extends ApiException {
    public PermissionDeniedException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
