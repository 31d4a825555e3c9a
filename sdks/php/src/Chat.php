<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->chat->completions->create([...]) */
final class Chat
{
    public readonly Resource $completions;

    public function __construct(Client $client)
    {
        $this->completions = new Resource($client, 'chat.completions');
    }
}
