package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/**
 * The gateway answered an error status (the base of the status-specific exceptions; used as it is for a status none of
 * them names). {@link #code()} is the gateway's error code, {@link #requestId()} its X-Request-Id, and
 * {@link #failedReceipt()} the signed record of the refusal when the key had been accepted.
 */
public class ApiException extends RelayException {
    private JsonNode failedReceipt;

    public ApiException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }

    /**
     * The decoded X-Service-Receipt-Failed: a call refused after its key was accepted carries a signed v2-shaped receipt
     * ({@code outcome "failed"}, {@code status}, {@code error_code}, {@code extensions.request_id}) chained per
     * organisation; verify it with {@code client.verifyReceipt}. Null when the gateway sent none (no valid key).
     */
    public JsonNode failedReceipt() {
        return failedReceipt;
    }

    void failedReceipt(JsonNode receipt) {
        this.failedReceipt = receipt;
    }
}
