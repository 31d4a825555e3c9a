<?php

declare(strict_types=1);

namespace PrivacyRelay;

final class Version
{
    public const VERSION = '0.1.0';
    /** The engine id this SDK names in its attestations (accepted by the gateway's default allowlist). */
    public const ENGINE_ID = 'relay-php';
}
