<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->rest->webhooks->deliveries (portal token). */
final class RestWebhookDeliveries extends RestSection
{
    /** @param array<string,mixed>|null $query e.g. ['endpoint_id' => ..., 'status' => ...] */
    public function list(?array $query = null, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/webhooks/deliveries' . self::query($query), 'portal', null, $options);
    }

    public function get(string|int $id, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/webhooks/deliveries/' . self::id($id), 'portal', null, $options);
    }

    public function replay(string|int $id, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/webhooks/deliveries/' . self::id($id) . '/replay', 'portal', null, $options);
    }
}
