package dev.privacyrelay.errors;

import dev.privacyrelay.RelayException;

/**
 * A client setting or a file it names is unusable (code {@code configuration_error}): a gateway URL that is neither
 * https nor loopback, a key file readable by other users, a missing key. Thrown before anything is sent.
 */
public final class ConfigurationException extends RelayException {
    public ConfigurationException(String message) {
        super("configuration_error", message, 0, null, null);
    }
}
