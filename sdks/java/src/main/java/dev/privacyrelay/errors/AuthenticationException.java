package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** 401: no key, an unknown or revoked key, or a bad portal token (invalid_key, portal_auth_required). */
public class AuthenticationException extends ApiException {
    public AuthenticationException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
