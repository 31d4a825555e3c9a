package dev.privacyrelay.errors;

import dev.privacyrelay.RelayException;

/** No HTTP answer: the connection failed or broke (code {@code connection_error}); retried before it is thrown. */
public final class ConnectionException extends RelayException {
    public ConnectionException(String message, Throwable cause) {
        super("connection_error", message, 0, null, null);
        if (cause != null) initCause(cause);
    }
}
