<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 429 (retryAfter: seconds from Retry-After). */
class RateLimitException extends PrivacyRelayException
{
}
