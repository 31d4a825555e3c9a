package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.engine.Engine;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Offline receipt verification against a JWKS (the gateway's {@code /api/.well-known/service-receipt-pubkeys.jwks}),
 * by the engine. A tampered, forged or unknown-key receipt is a verdict ({@code valid() == false} with a reason), not
 * an exception; an unusable JWKS is an {@link dev.privacyrelay.engine.EngineException} ({@code jwks_invalid}).
 */
public final class Receipts {
    /** The engine's reason for a kid no published key has (sdks/vectors/receipts.json): the client refetches the JWKS. */
    static final String UNKNOWN_KID = "no published verification key has kid";

    private Receipts() {}

    /** Verifies a receipt: a header value (standard base64 JSON), the envelope's JSON text, or a decoded envelope. */
    public static Verification verify(Object receipt, JsonNode jwks) {
        return verify(receipt, jwks, null, null);
    }

    /**
     * Verifies a receipt at {@code now} (null: the current time); {@code attestation} (the X-Service-Attestation value
     * sent) binds a v3 countersignature to the call it countersigns (null for other receipts).
     */
    public static Verification verify(Object receipt, JsonNode jwks, Instant now, String attestation) {
        return verify(Engine.shared(), receipt, jwks, now, attestation);
    }

    static Verification verify(Engine engine, Object receipt, JsonNode jwks, Instant now, String attestation) {
        Map<String, Object> options = new LinkedHashMap<>();
        if (now != null) options.put("now_seconds", now.getEpochSecond());
        if (attestation != null) options.put("attestation", attestation);
        String text = receipt instanceof JsonNode ? receipt.toString() : String.valueOf(receipt);
        return Verification.of(engine.verifyReceipt(text, jwks, options));
    }
}
