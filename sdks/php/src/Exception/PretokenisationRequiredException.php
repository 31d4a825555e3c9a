<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 428. */
class PretokenisationRequiredException extends PrivacyRelayException
{
}
