<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 413. */
class PayloadTooLargeException extends PrivacyRelayException
{
}
