<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** A client setting or the environment is wrong; nothing was sent. */
class ConfigurationException extends PrivacyRelayException
{
}
