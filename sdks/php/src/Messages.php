<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->messages->create([...]) and $client->messages->countTokens([...]) (not billed, no receipt). */
final class Messages extends Resource
{
    public function __construct(Client $client)
    {
        parent::__construct($client, 'messages');
    }

    /** @param array<string,mixed> $body */
    public function countTokens(array $body, array $options = []): Response
    {
        $r = $this->client->relay('messages.count_tokens', $body, $options);
        assert($r instanceof Response);
        return $r;
    }
}
