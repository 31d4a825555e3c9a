package dev.privacyrelay.errors;

import dev.privacyrelay.RelayException;

/**
 * The URL did not answer the gateway identity probe ({@code GET /api/.well-known/service-receipt-pubkeys.jwks} with a
 * JWKS of public P-256 keys), so it is not a Privacy Relay gateway: code {@code gateway_identity_failed}, or
 * {@code gateway_unreachable} when nothing answered. No key and no request body was sent.
 */
public final class GatewayIdentityException extends RelayException {
    public GatewayIdentityException(String code, String message, int status) {
        super(code, message, status, null, null);
    }
}
