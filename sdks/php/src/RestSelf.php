<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->rest->self: the calling key's own record, balance and usage. */
final class RestSelf
{
    public function __construct(private Client $client)
    {
    }

    public function key(array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/self/key', 'key', null, $options);
    }

    public function balance(array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/self/balance', 'key', null, $options);
    }

    public function usage(?string $from = null, ?string $to = null, array $options = []): array
    {
        $q = http_build_query(array_filter(['from' => $from, 'to' => $to], static fn ($v) => $v !== null));
        return $this->client->call('GET', '/api/v1/self/usage' . ($q === '' ? '' : "?$q"), 'key', null, $options);
    }
}
