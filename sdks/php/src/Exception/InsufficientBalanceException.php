<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 402. */
class InsufficientBalanceException extends PrivacyRelayException
{
}
