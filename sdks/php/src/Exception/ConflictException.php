<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 409. */
class ConflictException extends PrivacyRelayException
{
}
