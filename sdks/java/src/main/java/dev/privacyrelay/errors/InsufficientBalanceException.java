package dev.privacyrelay.errors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/** 402 insufficient_balance: the wallet cannot pay for the call; nothing was relayed. */
public class InsufficientBalanceException extends ApiException {
    public InsufficientBalanceException(String code, String message, int status, String requestId, JsonNode details) {
        super(code, message, status, requestId, details);
    }
}
