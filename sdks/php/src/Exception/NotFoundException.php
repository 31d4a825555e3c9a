<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** 404. */
class NotFoundException extends PrivacyRelayException
{
}
