package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** 400: the gateway refused the request (invalid_request with details.path, egress_policy_violation, invalid_licence, ...). */
public class InvalidRequestException extends ApiException {
    public InvalidRequestException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
