<?php

declare(strict_types=1);

namespace PrivacyRelay;

/**
 * One relay route: create($body, $options). $body is the provider-shaped request (['model' => ..., 'messages' =>
 * ..., 'stream' => true]); $options: idempotencyKey, traceparent, timeout. Answers a Response, or a Stream when
 * $body['stream'] is true.
 */
class Resource
{
    public function __construct(protected Client $client, protected string $route)
    {
    }

    /**
     * @param array<string,mixed> $body
     * @param array{idempotencyKey?:string,traceparent?:string,timeout?:float} $options
     */
    public function create(array $body, array $options = []): Response|Stream
    {
        return $this->client->relay($this->route, $body, $options);
    }
}
