package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** 415 unsupported_content: media the gateway will not take. */
public class UnsupportedContentException extends ApiException {
    public UnsupportedContentException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
