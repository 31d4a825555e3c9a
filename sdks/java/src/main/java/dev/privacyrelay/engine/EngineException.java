package dev.privacyrelay.engine;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.RelayException;

/**
 * The engine refused a call: its stable code ({@code invalid_json}, {@code unsupported_field},
 * {@code unsupported_content}, {@code nesting_too_deep}, ...) and details. Nothing was sent: the engine runs before
 * anything leaves the device. The HTTP status is the one the proxy would answer (400, or 415 for media).
 */
public class EngineException extends RelayException {
    public EngineException(String code, String message, JsonNode details) {
        super(code, message, statusOf(code), null, details);
    }

    static int statusOf(String code) {
        switch (code) {
            case "unsupported_content":
                return 415;
            case "internal_error":
                return 500;
            default:
                return 400;
        }
    }
}
