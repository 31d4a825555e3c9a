<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->models->list() */
final class Models
{
    public function __construct(private Client $client)
    {
    }

    /** @return array<string,mixed> */
    public function list(array $options = []): array
    {
        return $this->client->getJson('/api/v1/models', $options);
    }
}
