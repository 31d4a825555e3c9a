<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\ConnectionException;
use PrivacyRelay\Exception\PrivacyRelayException;

/**
 * HTTP over PHP's stream wrappers (no extension beyond what php-cli has), with retries: after the first attempt,
 * `retries` more on 429, 5xx and network errors, waiting what Retry-After says (a wait over maxRetryAfter is not
 * made: the error goes to the caller) or an exponential backoff with full jitter. The caller's headers
 * (Idempotency-Key included) are the same on every attempt. Redirects are not followed.
 */
class Transport
{
    /** @var callable(float):void */
    private $sleep;

    public function __construct(
        private int $retries = 2,
        private float $timeout = 60.0,
        private float $baseDelay = 0.5,
        private float $maxDelay = 8.0,
        private float $maxRetryAfter = 60.0,
        ?callable $sleep = null,
    ) {
        $this->sleep = $sleep ?? static function (float $s): void {
            usleep((int) ($s * 1e6));
        };
    }

    public static function traceparent(): string
    {
        return '00-' . bin2hex(random_bytes(16)) . '-' . bin2hex(random_bytes(8)) . '-01';
    }

    /**
     * Sends and reads the whole answer: [status, headers (lowercase names), body].
     * @param array<string,string> $headers
     * @return array{0:int,1:array<string,string>,2:string}
     */
    public function request(string $method, string $url, array $headers, ?string $body = null, ?float $timeout = null): array
    {
        [$status, $h, $fp] = $this->open($method, $url, $headers, $body, $timeout);
        $text = stream_get_contents($fp);
        fclose($fp);
        return [$status, $h, (string) $text];
    }

    /**
     * Sends; answers a 2xx answer's [status, headers, open stream] for the caller to read (a stream); an answer
     * >= 400 is read and thrown as its typed exception (after the retries).
     * @param array<string,string> $headers
     * @return array{0:int,1:array<string,string>,2:resource}
     */
    public function open(string $method, string $url, array $headers, ?string $body = null, ?float $timeout = null): array
    {
        $attempt = 0;
        while (true) {
            $attempt++;
            try {
                return $this->once($method, $url, $headers, $body, $timeout ?? $this->timeout);
            } catch (ConnectionException | PrivacyRelayException $failure) {
                $retryable = $failure instanceof ConnectionException || $failure->status === 429 || $failure->status >= 500;
                if (!$retryable || $attempt > $this->retries) {
                    throw $failure;
                }
                $wait = $failure->retryAfter;
                if ($wait !== null && $wait > $this->maxRetryAfter) {
                    throw $failure;
                }
                ($this->sleep)($wait ?? (mt_rand() / mt_getrandmax()) * min($this->maxDelay, $this->baseDelay * 2 ** ($attempt - 1)));
            }
        }
    }

    /**
     * @param array<string,string> $headers
     * @return array{0:int,1:array<string,string>,2:resource}
     */
    protected function once(string $method, string $url, array $headers, ?string $body, float $timeout): array
    {
        $lines = [];
        foreach ($headers + ['connection' => 'close'] as $k => $v) {
            $lines[] = "$k: $v";
        }
        $ctx = stream_context_create([
            'http' => [
                'method' => $method, 'header' => implode("\r\n", $lines), 'content' => $body ?? '',
                'ignore_errors' => true, 'follow_location' => 0, 'max_redirects' => 1, 'timeout' => $timeout,
                'protocol_version' => 1.1,
            ],
            'ssl' => ['verify_peer' => true, 'verify_peer_name' => true],
        ]);
        $warning = null;
        set_error_handler(static function (int $no, string $msg) use (&$warning): bool {
            $warning = $msg;
            return true;
        });
        try {
            $fp = fopen($url, 'rb', false, $ctx);
        } finally {
            restore_error_handler();
        }
        if ($fp === false) {
            $why = $warning !== null ? preg_replace('/^fopen\([^)]*\): /', '', $warning) : 'no answer';
            throw new ConnectionException("$method $url failed: $why", 0, 'connection_error');
        }
        $meta = stream_get_meta_data($fp);
        [$status, $h] = self::parseHeaders($meta['wrapper_data'] ?? []);
        if ($status >= 400) {
            $text = (string) stream_get_contents($fp);
            fclose($fp);
            throw PrivacyRelayException::fromAnswer($status, $h, $text);
        }
        if ($status === 0) {
            fclose($fp);
            throw new ConnectionException("$method $url: no HTTP status line", 0, 'connection_error');
        }
        return [$status, $h, $fp];
    }

    /**
     * @param list<string> $raw
     * @return array{0:int,1:array<string,string>}
     */
    public static function parseHeaders(array $raw): array
    {
        $status = 0;
        $h = [];
        foreach ($raw as $line) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $m)) {
                $status = (int) $m[1];
                $h = [];
            } elseif (($p = strpos($line, ':')) !== false) {
                $h[strtolower(trim(substr($line, 0, $p)))] = trim(substr($line, $p + 1));
            }
        }
        return [$status, $h];
    }
}
