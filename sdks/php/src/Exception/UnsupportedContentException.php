<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 415. */
class UnsupportedContentException extends PrivacyRelayException
{
}
