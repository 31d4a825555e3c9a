package dev.privacyrelay;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Remembers the last {@code capacity} webhook event ids so a redelivered event (retries and replays carry the same
 * X-Service-Webhook-Event-Id) is acted on once. Check it after {@link Webhooks#verify}: a forged delivery must not
 * take a slot. Thread-safe; in memory (use your database for dedupe across processes).
 */
public final class WebhookDeduper {
    private final int capacity;
    private final LinkedHashMap<String, Boolean> seen;

    public WebhookDeduper() {
        this(10_000);
    }

    public WebhookDeduper(int capacity) {
        if (capacity <= 0) throw new IllegalArgumentException("capacity must be > 0");
        this.capacity = capacity;
        this.seen = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                return size() > WebhookDeduper.this.capacity;
            }
        };
    }

    /** Records {@code eventId}; true the first time it is seen, false for a repeat. */
    public synchronized boolean firstTime(String eventId) {
        if (eventId == null || eventId.isEmpty()) throw new IllegalArgumentException("the delivery has no event id");
        return seen.putIfAbsent(eventId, Boolean.TRUE) == null;
    }

    public synchronized int size() {
        return seen.size();
    }
}
