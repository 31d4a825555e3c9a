package dev.privacyrelay.errors;

import dev.privacyrelay.RelayException;

/**
 * A webhook delivery failed verification: {@code code()} is {@code missing_headers}, {@code malformed_header},
 * {@code bad_signature}, {@code stale_timestamp}, {@code malformed_body} or {@code missing_secret}. Answer the
 * sender 400 and do not act on the body.
 */
public final class WebhookVerificationException extends RelayException {
    public WebhookVerificationException(String code, String message) {
        super(code, message, 400, null, null);
    }
}
