<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** The URL does not answer the gateway identity probe. */
class GatewayIdentityException extends PrivacyRelayException
{
}
