package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.errors.ApiException;
import java.util.Map;

/**
 * {@code client.rest().receipts()}: offline verification against the cached JWKS, the organisation's stored receipts
 * (portal token), online verification, countersignatures (gateway key) and the public transparency log.
 */
public final class ReceiptService {
    private final RestService rest;
    private final RelayClient client;

    ReceiptService(RestService rest, RelayClient client) {
        this.rest = rest;
        this.client = client;
    }

    /** Offline, against the gateway's JWKS (refetched once on an unknown kid): see {@link RelayClient#verifyReceipt}. */
    public Verification verify(Object receipt) {
        return client.verifyReceipt(receipt);
    }

    /** {"receipts":[...],"next_cursor"?}, newest first; params limit, cursor, from, to, model. */
    public JsonNode list(Map<String, ?> params) {
        return rest.get("/api/v1/receipts" + RestService.query(params), Auth.PORTAL);
    }

    /** One stored receipt by its jti (the X-Service-Receipt-V2-JTI value). */
    public JsonNode get(String jti) {
        return rest.get("/api/v1/receipts/" + RestService.seg(jti), Auth.PORTAL);
    }

    /** The gateway's verdict on a receipt; an invalid receipt (answered 422) is a verdict, not an exception. */
    public Verification verifyOnline(Object receipt) {
        Object r = receipt;
        if (receipt instanceof String) {
            JsonNode decoded = client.decodeHeader((String) receipt);
            if (decoded != null) r = decoded;
            else {
                try {
                    r = client.json.readTree((String) receipt);
                } catch (java.io.IOException notJson) {
                    r = receipt;
                }
            }
        }
        try {
            return Verification.of(rest.request("POST", "/api/v1/receipts/verify", Auth.NONE, Map.of("receipt", r), CallOptions.NONE));
        } catch (ApiException e) {
            if (e.status() == 422) return new Verification(false, e.getMessage(), null);
            throw e;
        }
    }

    /** A v3 countersignature of a call made straight to a provider: {attestation, provider, model, hash_upstream_*}. */
    public JsonNode countersign(Map<String, ?> body) {
        return rest.request("POST", "/api/v1/receipts/countersign", Auth.KEY, body, CallOptions.NONE);
    }

    /** The transparency log's signed tree head (public). */
    public JsonNode signedTreeHead() {
        return rest.get("/api/v1/transparency/sth", Auth.NONE);
    }

    /** The proof that receipt {@code jti} is in the log (public); verify it with {@link #verifyInclusionProof}. */
    public JsonNode inclusionProof(String jti) {
        return rest.get("/api/v1/transparency/proof/" + RestService.seg(jti), Auth.NONE);
    }

    /** The proof that the log at {@code first} is a prefix of the log now (second null) or at {@code second}. */
    public JsonNode consistencyProof(long first, Long second) {
        return rest.get("/api/v1/transparency/consistency" + RestService.query("first", first, "second", second), Auth.NONE);
    }

    /** Verifies an inclusion proof offline against the gateway's JWKS, bound to {@code receipt} when given. */
    public Verification verifyInclusionProof(JsonNode proof, Object receipt) {
        Map<String, Object> options = receipt == null ? Map.of() : Map.of("receipt", receipt instanceof JsonNode ? receipt : String.valueOf(receipt));
        return Verification.of(client.engine.verifyInclusionProof(proof, null, client.jwks(), options));
    }

    /** Verifies offline that {@code keptHead} (a signed tree head you kept) is a prefix of the proof's newer head. */
    public Verification verifyConsistencyProof(JsonNode proof, JsonNode keptHead) {
        return Verification.of(client.engine.verifyConsistencyProof(proof, keptHead, client.jwks(), Map.of()));
    }
}
