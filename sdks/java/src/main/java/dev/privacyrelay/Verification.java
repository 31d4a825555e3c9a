package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An offline verdict on a receipt (v1, v2, failed, v3 countersignature): {@code valid}, the {@code reason} when it is
 * not (null when it is), and the {@code checks} as labelled by the spec ({@code [{label, status, detail}]}).
 */
public record Verification(boolean valid, String reason, JsonNode checks) {
    static Verification of(JsonNode verdict) {
        JsonNode reason = verdict.get("reason");
        return new Verification(verdict.path("valid").asBoolean(false), reason == null || reason.isNull() ? null : reason.asText(), verdict.get("checks"));
    }
}
