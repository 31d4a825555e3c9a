package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** 5xx: the gateway or the provider failed (upstream_error, upstream_timeout, ...). Retried before it is thrown. */
public class ServerException extends ApiException {
    public ServerException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
