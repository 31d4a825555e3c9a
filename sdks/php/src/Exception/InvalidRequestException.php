<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 400 (also the engine's invalid_request / unsupported_field). */
class InvalidRequestException extends PrivacyRelayException
{
}
