package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** 428 pretokenised_required: the gateway did not accept this device's attestation; nothing was forwarded. */
public class PretokenisationRequiredException extends ApiException {
    public PretokenisationRequiredException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
