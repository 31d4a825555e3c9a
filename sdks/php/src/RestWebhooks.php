<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->rest->webhooks: endpoints and deliveries (portal token). */
final class RestWebhooks
{
    public readonly RestWebhookEndpoints $endpoints;
    public readonly RestWebhookDeliveries $deliveries;

    public function __construct(Client $client)
    {
        $this->endpoints = new RestWebhookEndpoints($client);
        $this->deliveries = new RestWebhookDeliveries($client);
    }
}
