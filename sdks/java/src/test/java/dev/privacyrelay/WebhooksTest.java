package dev.privacyrelay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.privacyrelay.engine.Engine;
import dev.privacyrelay.errors.WebhookVerificationException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Webhook verification's typed refusals and the dedupe helper (the signing vectors are in engine.VectorsTest). */
class WebhooksTest {
    static final String SECRET = "whsec_test_secret";
    static final String BODY = "{\"event_id\":\"6f1c\",\"event\":\"webhook.test\"}";

    static Map<String, String> signedAt(long t) {
        return Map.of("X-Service-Signature", Engine.shared().signWebhook("v1", BODY, SECRET, Map.of("timestamp", t)),
                "X-Service-Webhook-Event-Id", "6f1c");
    }

    @Test
    void aFreshV1SignatureVerifiesAndAnyChangeIsRefusedWithItsCode() {
        long now = Instant.now().getEpochSecond();
        byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
        Webhooks.verify(body, signedAt(now), SECRET);
        assertEquals("bad_signature", assertThrows(WebhookVerificationException.class,
                () -> Webhooks.verify(BODY.replace("test", "tesT").getBytes(StandardCharsets.UTF_8), signedAt(now), SECRET)).code());
        assertEquals("stale_timestamp", assertThrows(WebhookVerificationException.class, () -> Webhooks.verify(body, signedAt(now - 301), SECRET)).code());
        Webhooks.verify(body, signedAt(now - 301), SECRET, Duration.ofSeconds(600), null);
        assertEquals("missing_headers", assertThrows(WebhookVerificationException.class, () -> Webhooks.verify(body, Map.of(), SECRET)).code());
        WebhookVerificationException e = assertThrows(WebhookVerificationException.class, () -> Webhooks.verify(body, signedAt(now), "whsec_other"));
        assertEquals(400, e.status());
    }

    @Test
    void theDeduperActsOnceForAnEventIdAndForgetsTheOldestBeyondItsCapacity() {
        WebhookDeduper d = new WebhookDeduper(2);
        assertTrue(d.firstTime("a"));
        assertFalse(d.firstTime("a"));
        assertTrue(d.firstTime("b"));
        assertTrue(d.firstTime("c"));
        assertEquals(2, d.size());
        assertTrue(d.firstTime("a"), "a was the oldest and was forgotten");
        assertThrows(IllegalArgumentException.class, () -> d.firstTime(""));
        assertEquals("6f1c", Webhooks.eventId(Map.of("x-service-webhook-event-id", "6f1c")));
    }
}
