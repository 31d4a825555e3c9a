<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->rest->webhooks->endpoints (portal token). create() answers the signing secret, shown once. */
final class RestWebhookEndpoints extends RestSection
{
    /** @param list<string>|null $events */
    public function create(string $url, ?array $events = null, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/webhooks/endpoints', 'portal',
            (object) array_filter(['url' => $url, 'events' => $events], static fn ($v) => $v !== null), $options);
    }

    public function list(array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/webhooks/endpoints', 'portal', null, $options);
    }

    public function get(string|int $id, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/webhooks/endpoints/' . self::id($id), 'portal', null, $options);
    }

    public function update(string|int $id, array $changes, array $options = []): array
    {
        return $this->client->call('PATCH', '/api/v1/webhooks/endpoints/' . self::id($id), 'portal', (object) $changes, $options);
    }

    public function delete(string|int $id, array $options = []): array
    {
        return $this->client->call('DELETE', '/api/v1/webhooks/endpoints/' . self::id($id), 'portal', null, $options);
    }

    public function rotateSecret(string|int $id, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/webhooks/endpoints/' . self::id($id) . '/rotate', 'portal', null, $options);
    }

    /** Sends a test event to the endpoint. */
    public function test(string|int $id, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/webhooks/endpoints/' . self::id($id) . '/test', 'portal', null, $options);
    }

    /** Re-enables an endpoint the gateway paused after failed deliveries. */
    public function resume(string|int $id, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/webhooks/endpoints/' . self::id($id) . '/resume', 'portal', null, $options);
    }
}
