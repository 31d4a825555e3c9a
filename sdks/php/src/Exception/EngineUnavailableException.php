<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** The engine library is missing, unloadable, of another ABI version, or PHP's FFI is disabled. */
class EngineUnavailableException extends ConfigurationException
{
}
