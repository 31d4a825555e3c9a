<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 5xx. */
class ServerException extends PrivacyRelayException
{
}
