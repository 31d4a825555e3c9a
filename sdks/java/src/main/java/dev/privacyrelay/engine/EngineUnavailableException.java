package dev.privacyrelay.engine;

import dev.privacyrelay.RelayException;

/**
 * The engine library could not be used: not found, not the engine, or built for another C ABI version. Raised when
 * the engine is first loaded, never a crash; the message names what was tried and the fix.
 */
public class EngineUnavailableException extends RelayException {
    public EngineUnavailableException(String message) {
        super("engine_unavailable", message, 0, null, null);
    }
}
