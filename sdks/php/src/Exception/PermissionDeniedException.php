<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 403. */
class PermissionDeniedException extends PrivacyRelayException
{
}
