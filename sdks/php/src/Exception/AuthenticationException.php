<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 401. */
class AuthenticationException extends PrivacyRelayException
{
}
