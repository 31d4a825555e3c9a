<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** Malformed SSE, or a stream cut before its end marker. */
class StreamException extends PrivacyRelayException
{
}
