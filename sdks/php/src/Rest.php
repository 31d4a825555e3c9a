<?php

declare(strict_types=1);

namespace PrivacyRelay;

/**
 * The REST calls a gateway key may make ($client->rest): the key's own view (self), receipts and transparency,
 * self-service key. Portal-token operations (keys, webhook endpoints, billing) are not wrapped yet.
 * Every write carries an Idempotency-Key (the same across retries); options: idempotencyKey, traceparent, timeout.
 */
final class Rest
{
    public readonly RestSelf $self;
    public readonly RestReceipts $receipts;

    public function __construct(private Client $client)
    {
        $this->self = new RestSelf($client);
        $this->receipts = new RestReceipts($client);
    }

    /** A self-service key (shown once): ['api_key' => ..., 'key_prefix' => ...]. No auth. */
    public function selfServiceKey(?string $email = null, ?string $name = null, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/self-service/key', false,
            (object) array_filter(['email' => $email, 'name' => $name], static fn ($v) => $v !== null), $options);
    }
}
