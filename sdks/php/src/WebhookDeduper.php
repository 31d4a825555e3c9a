<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** Remembers webhook event ids for ttlSeconds: seen($id) is false the first time, true for a redelivery. */
final class WebhookDeduper
{
    /** @var array<string,float> */
    private array $seen = [];
    /** @var \Closure():float */
    private \Closure $now;

    public function __construct(private float $ttlSeconds = 86400.0, ?\Closure $now = null)
    {
        $this->now = $now ?? static fn (): float => hrtime(true) / 1e9;
    }

    public function seen(string $eventId): bool
    {
        $t = ($this->now)();
        foreach ($this->seen as $id => $at) {
            if ($t - $at > $this->ttlSeconds) {
                unset($this->seen[$id]);
            }
        }
        if (isset($this->seen[$eventId])) {
            return true;
        }
        $this->seen[$eventId] = $t;
        return false;
    }

    public function size(): int
    {
        return count($this->seen);
    }

    /** The event id of a delivery: X-Service-Webhook-Event-Id, else the body's event_id. */
    public static function eventIdOf(string $body, array $headers): ?string
    {
        $h = array_change_key_case($headers, CASE_LOWER);
        if (is_string($h['x-service-webhook-event-id'] ?? null) && $h['x-service-webhook-event-id'] !== '') {
            return $h['x-service-webhook-event-id'];
        }
        $v = json_decode($body, true);
        return is_array($v) && is_string($v['event_id'] ?? null) ? $v['event_id'] : null;
    }
}
