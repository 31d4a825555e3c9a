<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** The engine refused its arguments (null_argument, invalid_utf8, invalid_json, invalid_argument, ...). */
class EngineException extends PrivacyRelayException
{
}
