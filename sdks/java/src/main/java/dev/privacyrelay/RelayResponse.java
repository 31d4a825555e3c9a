package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A relay answer (chat completion, message, embeddings, response, token count) with the originals restored on this
 * device. {@link #body()} is the provider-shaped JSON; the metadata says what left the device and what the gateway
 * signed: {@link #receipt()} (the decoded X-Service-Receipt-V2) and whether it verified offline against the gateway's
 * JWKS, the gateway's countersignature of this call's attestation (X-Service-Receipt-V3) and its verdict.
 */
public final class RelayResponse {
    private final JsonNode body;
    private final String requestId;
    private final JsonNode receipt;
    private final Verification receiptVerification;
    private final String tokenisedRequest;
    private final String attestation;
    private final JsonNode countersignature;
    private final Verification countersignatureVerification;

    RelayResponse(JsonNode body, String requestId, JsonNode receipt, Verification receiptVerification, String tokenisedRequest,
                  String attestation, JsonNode countersignature, Verification countersignatureVerification) {
        this.body = body;
        this.requestId = requestId;
        this.receipt = receipt;
        this.receiptVerification = receiptVerification;
        this.tokenisedRequest = tokenisedRequest;
        this.attestation = attestation;
        this.countersignature = countersignature;
        this.countersignatureVerification = countersignatureVerification;
    }

    /** The answer, originals restored. */
    public JsonNode body() {
        return body;
    }

    /**
     * The answer's text: a chat completion's first choice, a message's text blocks, a response's output_text parts
     * (empty for embeddings).
     */
    public String text() {
        return Answers.text(body);
    }

    /** The gateway's X-Request-Id. */
    public String requestId() {
        return requestId;
    }

    /** The decoded receipt-v2, or null (demo keys get none). */
    public JsonNode receipt() {
        return receipt;
    }

    /** Null without a receipt; else whether it verified offline against the gateway's JWKS. */
    public Boolean receiptVerified() {
        if (receiptVerification != null) return receiptVerification.valid();
        return receipt == null ? null : Boolean.FALSE;
    }

    public Verification receiptVerification() {
        return receiptVerification;
    }

    /** Exactly the bytes that left this device (what the provider saw), as text. */
    public String tokenisedRequest() {
        return tokenisedRequest;
    }

    /** The X-Service-Attestation header sent with the call. */
    public String attestation() {
        return attestation;
    }

    /** The gateway's v3 countersignature of the attestation (X-Service-Receipt-V3, decoded), or null. */
    public JsonNode countersignature() {
        return countersignature;
    }

    /** Null without a countersignature; else whether it verified and countersigns this call's attestation. */
    public Boolean countersignatureVerified() {
        if (countersignatureVerification != null) return countersignatureVerification.valid();
        return countersignature == null ? null : Boolean.FALSE;
    }

    public Verification countersignatureVerification() {
        return countersignatureVerification;
    }

    @Override
    public String toString() {
        return body.toString();
    }
}
