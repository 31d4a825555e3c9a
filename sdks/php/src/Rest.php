<?php

declare(strict_types=1);

namespace PrivacyRelay;

/**
 * The REST calls a gateway key may make ($client->rest): the key's own view (self), receipts and transparency,
 * self-service and demo keys; with the client's portalToken also keys, receipts list/get, webhooks and billing.
 * Every write carries an Idempotency-Key (the same across retries); options: idempotencyKey, traceparent, timeout.
 */
final class Rest
{
    public readonly RestSelf $self;
    public readonly RestReceipts $receipts;
    public readonly RestKeys $keys;
    public readonly RestWebhooks $webhooks;
    public readonly RestBilling $billing;

    public function __construct(private Client $client)
    {
        $this->self = new RestSelf($client);
        $this->receipts = new RestReceipts($client);
        $this->keys = new RestKeys($client);
        $this->webhooks = new RestWebhooks($client);
        $this->billing = new RestBilling($client);
    }

    /** A self-service key (shown once): ['api_key' => ..., 'key_prefix' => ...]. No auth. */
    public function selfServiceKey(?string $email = null, ?string $name = null, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/self-service/key', 'none',
            (object) array_filter(['email' => $email, 'name' => $name], static fn ($v) => $v !== null), $options);
    }

    /** An anonymous demo key, relay only (shown once). No auth. */
    public function demoKey(array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/demo/key', 'none', null, $options);
    }
}
