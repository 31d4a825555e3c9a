package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.privacyrelay.engine.Engine;
import dev.privacyrelay.errors.WebhookVerificationException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Verifies a webhook delivery from the gateway, by the engine: the v1 signature ({@code X-Service-Signature:
 * t=<unix>,v1=<hex HMAC-SHA256 of "t.body">}) within the tolerance, else the v0 fallback, compared in constant time.
 * Pass the body exactly as received (bytes, before any JSON parsing) and the endpoint's secret.
 */
public final class Webhooks {
    /** The default tolerance between the signature's timestamp and now. */
    public static final Duration DEFAULT_TOLERANCE = Duration.ofSeconds(300);

    private Webhooks() {}

    /** Returns normally when the delivery is authentic and fresh; else a {@link WebhookVerificationException}. */
    public static void verify(byte[] body, Map<String, String> headers, String secret) {
        verify(body, headers, secret, DEFAULT_TOLERANCE, null);
    }

    /** As {@link #verify(byte[], Map, String)} with your tolerance, at {@code now} (null: the current time). */
    public static void verify(byte[] body, Map<String, String> headers, String secret, Duration tolerance, Instant now) {
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("tolerance_seconds", tolerance.getSeconds());
        if (now != null) options.put("now_seconds", now.getEpochSecond());
        JsonNode verdict = Engine.shared().verifyWebhook(body, headers, secret, options);
        if (!verdict.path("ok").asBoolean(false)) {
            throw new WebhookVerificationException(verdict.path("code").asText("bad_signature"), verdict.path("message").asText("The webhook signature did not verify."));
        }
    }

    /** The delivery's event id: the X-Service-Webhook-Event-Id header (any case), for {@link WebhookDeduper}. */
    public static String eventId(Map<String, String> headers) {
        for (Map.Entry<String, String> e : headers.entrySet()) {
            if (e.getKey().equalsIgnoreCase("x-service-webhook-event-id")) return e.getValue();
        }
        return null;
    }
}
