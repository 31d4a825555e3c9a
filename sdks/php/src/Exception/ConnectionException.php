<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/** No HTTP answer (connection refused, DNS, TLS, timeout). */
class ConnectionException extends PrivacyRelayException
{
}
