<?php

declare(strict_types=1);

namespace PrivacyRelay\Exception;

/**
 * Every failure of the SDK: status (0 when no HTTP answer was received), a stable code (the gateway's error code or
 * one of the SDK's: configuration_error, engine_unavailable, gateway_identity_failed, connection_error, stream_error,
 * invalid_request, engine_error), requestId (the gateway's X-Request-Id), body (the decoded error object),
 * retryAfter (seconds the gateway's Retry-After asked for, or null) and failedReceipt (the signed record of a call
 * refused after its key was accepted, X-Service-Receipt-Failed decoded; verify it like any receipt).
 */
class PrivacyRelayException extends \RuntimeException
{
    public function __construct(
        string $message,
        public readonly int $status = 0,
        public readonly string $errorCode = 'error',
        public readonly ?string $requestId = null,
        public readonly mixed $body = null,
        public ?float $retryAfter = null,
        public readonly ?array $failedReceipt = null,
    ) {
        parent::__construct($message);
    }

    /** The stable error code (getCode() is PHP's integer code, always 0 here). */
    public function code(): string
    {
        return $this->errorCode;
    }

    private const BY_STATUS = [
        400 => InvalidRequestException::class, 401 => AuthenticationException::class,
        402 => InsufficientBalanceException::class, 403 => PermissionDeniedException::class,
        404 => NotFoundException::class, 409 => ConflictException::class, 413 => PayloadTooLargeException::class,
        415 => UnsupportedContentException::class, 428 => PretokenisationRequiredException::class,
        429 => RateLimitException::class,
    ];

    /** Retry-After in seconds (delta-seconds or an HTTP date), or null. */
    public static function retryAfterSeconds(?string $value, ?float $now = null): ?float
    {
        if ($value === null || trim($value) === '') {
            return null;
        }
        $v = trim($value);
        if (preg_match('/^\d+(\.\d+)?$/', $v)) {
            return (float) $v;
        }
        $t = strtotime($v);
        return $t === false ? null : max(0.0, $t - ($now ?? microtime(true)));
    }

    /**
     * The typed exception of a gateway answer >= 400 ({error:{code,message}}, Anthropic's {type:"error",
     * error:{type,message}}, OAuth's {error, error_description}). $headers: lowercase names.
     *
     * @param array<string,string> $headers
     */
    public static function fromAnswer(int $status, array $headers, string $bodyText): self
    {
        $parsed = json_decode($bodyText, true);
        $record = is_array($parsed) ? $parsed : [];
        $inner = isset($record['error']) && is_array($record['error']) ? $record['error'] : null;
        $code = match (true) {
            $inner !== null && is_string($inner['code'] ?? null) => $inner['code'],
            $inner !== null && is_string($inner['type'] ?? null) => $inner['type'],
            is_string($record['error'] ?? null) => $record['error'],
            default => "http_$status",
        };
        $message = match (true) {
            $inner !== null && is_string($inner['message'] ?? null) && $inner['message'] !== '' => $inner['message'],
            is_string($record['error_description'] ?? null) => $record['error_description'],
            default => "The gateway answered $status.",
        };
        $class = self::BY_STATUS[$status] ?? ($status >= 500 ? ServerException::class : self::class);
        $failed = isset($headers['x-service-receipt-failed'])
            ? json_decode((string) base64_decode($headers['x-service-receipt-failed'], true), true) : null;
        return new $class($message, $status, $code, $headers['x-request-id'] ?? null, $inner ?? $parsed,
            self::retryAfterSeconds($headers['retry-after'] ?? null), is_array($failed) ? $failed : null);
    }
}
