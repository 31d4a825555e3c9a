package dev.privacyrelay.errors;

import dev.privacyrelay.RelayException;

/** An attempt took longer than the client's timeout (code {@code timeout}); retried before it is thrown. */
public final class RelayTimeoutException extends RelayException {
    public RelayTimeoutException(String message, Throwable cause) {
        super("timeout", message, 0, null, null);
        if (cause != null) initCause(cause);
    }
}
