<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\ConfigurationException;
use PrivacyRelay\Exception\GatewayIdentityException;
use PrivacyRelay\Exception\PrivacyRelayException;

/**
 * The client. Every relay call is tokenised and attested on this device by the shared engine (relay-php, through
 * the C ABI), sent to the gateway and answered with the originals restored here. Gateway-locked: https (or
 * loopback http) only, and no key is sent before the URL answered the gateway identity probe.
 *
 *   $client = new PrivacyRelay\Client(gatewayUrl: 'https://relay.example', apiKeyFile: '~/.privacy-relay/key');
 *   $r = $client->chat->completions->create(['model' => 'gpt-4o-mini', 'messages' => [...]]);
 */
final class Client
{
    public const IDENTITY_PROBE_PATH = '/api/.well-known/service-receipt-pubkeys.jwks';
    private const ROUTE_PATHS = [
        'chat.completions' => '/api/v1/chat/completions', 'messages' => '/api/v1/messages', 'embeddings' => '/api/v1/embeddings',
        'messages.count_tokens' => '/api/v1/messages/count_tokens', 'responses' => '/api/v1/responses',
    ];

    public readonly string $gatewayUrl;
    public readonly Chat $chat;
    public readonly Messages $messages;
    public readonly Resource $responses;
    public readonly Resource $embeddings;
    public readonly Models $models;
    public readonly Rest $rest;
    public readonly Engine $engine;
    private ?string $apiKey;
    private ?string $portalToken;
    private Transport $transport;
    private ?array $jwks = null;
    private ?float $jwksRefetchedAt = null;
    /** After a receipt names a kid the held JWKS lacks, it is fetched again at most once in this many seconds. */
    private const JWKS_REFETCH_INTERVAL = 60.0;

    /**
     * gatewayUrl: https, or http to a loopback address. apiKey or apiKeyFile (a file only you can read).
     * portalToken (spt_...): for the portal REST routes (keys, receipts list/get, webhooks, billing).
     * library: the engine library's path (else PRIVACY_RELAY_LIB, the package's native/, a checkout's build).
     * names: "builtin" (default) or "off". retries after the first attempt on 429, 5xx and network errors;
     * timeout per attempt (seconds). deviceKey: a P-256 private JWK (default: the device's, created on first use).
     * Every body is walked with the egress policy on this device before anything is sent (fail-closed): a field the
     * policy does not name is an InvalidRequestException (code unsupported_field, body['details']['path']), media an
     * UnsupportedContentException (415). Opt-ins, declared in the attestation's passthrough claim: mediaPolicy 'pass'
     * (media sent as it is) and passthroughPaths (JSON pointers, '*' for one segment, of fields sent untokenised).
     * @param list<string> $passthroughPaths
     */
    public function __construct(
        string $gatewayUrl,
        ?string $apiKey = null,
        ?string $apiKeyFile = null,
        ?string $portalToken = null,
        ?string $library = null,
        string $names = 'builtin',
        int $retries = 2,
        float $timeout = 60.0,
        ?array $deviceKey = null,
        bool $stableEmbeddingAliases = true,
        string $mediaPolicy = 'refuse',
        array $passthroughPaths = [],
        ?Transport $transport = null,
    ) {
        $this->gatewayUrl = Device::parseGatewayUrl($gatewayUrl);
        if ($apiKey !== null && $apiKeyFile !== null) {
            throw new ConfigurationException('Give apiKey or apiKeyFile, not both.', 0, 'configuration_error');
        }
        $key = $apiKeyFile !== null ? Device::readGatewayKeyFile($apiKeyFile) : $apiKey;
        if ($key !== null && !preg_match(Device::GATEWAY_KEY, $key)) {
            throw new ConfigurationException('apiKey is not a gateway key (svc_...).', 0, 'configuration_error');
        }
        $this->apiKey = $key;
        if ($portalToken !== null && !preg_match('/^spt_[A-Za-z0-9_-]+$/', $portalToken)) {
            throw new ConfigurationException('portalToken is not a portal token (spt_...).', 0, 'configuration_error');
        }
        $this->portalToken = $portalToken;
        Native::load($library);
        $this->engine = new Engine($names, $deviceKey, $stableEmbeddingAliases, $mediaPolicy, $passthroughPaths);
        $this->transport = $transport ?? new Transport($retries, $timeout);
        $this->chat = new Chat($this);
        $this->messages = new Messages($this);
        $this->responses = new Resource($this, 'responses');
        $this->embeddings = new Resource($this, 'embeddings');
        $this->models = new Models($this);
        $this->rest = new Rest($this);
    }

    /** The gateway's receipt keys (JWKS), fetched by the identity probe. */
    public function jwks(): array
    {
        return $this->ready();
    }

    /** Offline verification of a receipt (v1, v2, failed, v3) against this gateway's keys. */
    public function verifyReceipt(mixed $receipt): array
    {
        return Native::verifyReceipt($receipt, $this->jwksFor($receipt));
    }

    /**
     * A run of receipts (header values or envelopes, oldest first) verified offline as one chain against this gateway's
     * keys: ['valid' => bool, 'verified' => n, 'break' => null|['index', 'seq', 'kind', 'reason'], 'gaps' => [...]].
     * allowGaps: a client's own receipts of a chain its organisation shares (missing seqs reported, not a break).
     * @param list<mixed> $receipts
     */
    public function verifyReceiptChain(array $receipts, bool $allowGaps = false): array
    {
        return Native::verifyChain($receipts, $this->ready(), ['allow_gaps' => $allowGaps]);
    }

    /**
     * A webhook delivery's signature (v1 with tolerance, v0 fallback), offline: ['ok' => true] or
     * ['ok' => false, 'code' => ..., 'message' => ...].
     * @param array<string,string> $headers
     */
    public static function verifyWebhook(string $body, array $headers, string $secret, ?int $toleranceSeconds = null): array
    {
        return Native::verifyWebhook($body, $headers, $secret, $toleranceSeconds === null ? null : ['tolerance_seconds' => $toleranceSeconds]);
    }

    /** @internal */
    public function relay(string $route, array $body, array $options = []): Response|Stream
    {
        $idem = $options['idempotencyKey'] ?? null;
        $prepared = $this->engine->prepare($route, $body, $idem);
        $stream = in_array($route, ['chat.completions', 'messages', 'responses'], true) && ($body['stream'] ?? false) === true;
        $headers = $this->baseHeaders($options['traceparent'] ?? null) + [
            'content-type' => 'application/json',
            'idempotency-key' => $idem ?? self::uuid(),
        ] + $prepared->headers;
        $headers['accept'] = $stream ? 'text/event-stream' : 'application/json';
        $url = $this->gatewayUrl . self::ROUTE_PATHS[$route];
        $timeout = $options['timeout'] ?? null;
        $this->ready();
        if ($stream) {
            $open = fn () => $this->transport->open('POST', $url, $headers, $prepared->bodyText, $timeout);
            return new Stream($this, $route, $prepared, $open);
        }
        [, $h, $text] = $this->transport->request('POST', $url, $headers, $prepared->bodyText, $timeout);
        $data = json_decode($text, true);
        if (!is_array($data)) {
            throw new PrivacyRelayException('The gateway answered with a body that is not JSON.', 200, 'invalid_response', $h['x-request-id'] ?? null);
        }
        $receipt = self::decodeHeader($h['x-service-receipt-v2'] ?? null);
        [$ok, $verification] = $this->verify($receipt);
        return new Response(JsonRestore::restore($data, $prepared->map), $h['x-request-id'] ?? null, $receipt, $ok,
            $verification, self::decodeHeader($h['x-service-receipt-v3'] ?? null), $prepared->tokenisedBody, $prepared->passthrough);
    }

    /** @internal */
    public function getJson(string $path, array $options = []): array
    {
        $this->ready();
        [, , $text] = $this->transport->request('GET', $this->gatewayUrl . $path, $this->baseHeaders($options['traceparent'] ?? null), null, $options['timeout'] ?? null);
        $v = json_decode($text, true);
        return is_array($v) ? $v : [];
    }

    /**
     * @internal A REST call; $auth: 'key' (the gateway key), 'portal' (the portal token) or 'none'. A write
     * carries an Idempotency-Key (the same on every retry).
     */
    public function call(string $method, string $path, string $auth, mixed $body = null, array $options = []): array
    {
        $this->ready();
        $headers = match ($auth) {
            'key' => $this->baseHeaders($options['traceparent'] ?? null),
            'portal' => $this->portalHeaders($options['traceparent'] ?? null),
            'none' => ['accept' => 'application/json', 'traceparent' => $options['traceparent'] ?? Transport::traceparent()],
        };
        $text = null;
        if ($method !== 'GET') {
            $headers['content-type'] = 'application/json';
            $headers['idempotency-key'] = $options['idempotencyKey'] ?? self::uuid();
            $text = json_encode($body ?? new \stdClass(), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
        }
        [, , $answer] = $this->transport->request($method, $this->gatewayUrl . $path, $headers, $text, $options['timeout'] ?? null);
        $v = json_decode($answer, true);
        return is_array($v) ? $v : [];
    }

    /**
     * @internal
     * @return array{0:?bool,1:?array}
     */
    public function verify(?array $receipt): array
    {
        if ($receipt === null) {
            return [null, null];
        }
        $r = Native::verifyReceipt($receipt, $this->jwksFor($receipt));
        return [($r['valid'] ?? false) === true, $r];
    }

    /** @return array<string,string> */
    private function baseHeaders(?string $traceparent): array
    {
        if ($this->apiKey === null) {
            throw new ConfigurationException('This call needs a gateway key: give apiKey or apiKeyFile.', 0, 'configuration_error');
        }
        return ['authorization' => 'Bearer ' . $this->apiKey, 'accept' => 'application/json',
            'traceparent' => $traceparent ?? Transport::traceparent()];
    }

    /**
     * The JWKS to verify this receipt with: the one held, or a fresh one when it lacks the receipt's kid (a key the
     * gateway rotated in since the probe) and no refetch happened in the last JWKS_REFETCH_INTERVAL (so a forged kid
     * cannot turn every verification into a request). Rotated-out keys stay published, so no kid is ever dropped.
     */
    private function jwksFor(mixed $receipt): array
    {
        $held = $this->ready();
        $kid = is_array($receipt) && is_string($receipt['kid'] ?? null) ? $receipt['kid'] : null;
        if ($kid === null || in_array($kid, array_column($held['keys'], 'kid'), true)) {
            return $held;
        }
        $now = microtime(true);
        if ($this->jwksRefetchedAt !== null && $now - $this->jwksRefetchedAt < self::JWKS_REFETCH_INTERVAL) {
            return $held;
        }
        $this->jwksRefetchedAt = $now;
        $this->jwks = null;
        try {
            return $this->ready();
        } catch (GatewayIdentityException) {
            return $this->jwks = $held;
        }
    }

    /** @return array<string,string> */
    private function portalHeaders(?string $traceparent): array
    {
        if ($this->portalToken === null) {
            throw new ConfigurationException('This call needs a portal token: give portalToken (spt_...) to the client.', 0, 'configuration_error');
        }
        return ['authorization' => 'Bearer ' . $this->portalToken, 'accept' => 'application/json',
            'traceparent' => $traceparent ?? Transport::traceparent()];
    }

    /** The identity probe, once per client (again after a failure): nothing is sent before it passed. */
    private function ready(): array
    {
        if ($this->jwks !== null) {
            return $this->jwks;
        }
        try {
            [$status, , $text] = $this->transport->request('GET', $this->gatewayUrl . self::IDENTITY_PROBE_PATH, ['accept' => 'application/json']);
        } catch (PrivacyRelayException $e) {
            throw new GatewayIdentityException("gatewayUrl {$this->gatewayUrl} is not a Privacy Relay gateway or cannot be reached: "
                . $e->getMessage(), 0, 'gateway_identity_failed');
        }
        $body = json_decode($text, true);
        $keys = is_array($body) ? ($body['keys'] ?? null) : null;
        $good = $status === 200 && is_array($keys) && $keys !== [];
        foreach ($good ? $keys : [] as $k) {
            if (!is_array($k) || ($k['kty'] ?? null) !== 'EC' || ($k['crv'] ?? null) !== 'P-256' || array_key_exists('d', $k)) {
                $good = false;
            }
        }
        if (!$good) {
            throw new GatewayIdentityException("gatewayUrl {$this->gatewayUrl} is not a Privacy Relay gateway: the answer at GET "
                . self::IDENTITY_PROBE_PATH . ' is not a JWKS of P-256 receipt keys. Client components only talk to a gateway, never to a provider.',
                0, 'gateway_identity_failed');
        }
        return $this->jwks = $body;
    }

    private static function decodeHeader(?string $value): ?array
    {
        if ($value === null) {
            return null;
        }
        $v = json_decode((string) base64_decode(strtr($value, '-_', '+/')), true);
        return is_array($v) ? $v : null;
    }

    private static function uuid(): string
    {
        $b = random_bytes(16);
        $b[6] = chr((ord($b[6]) & 0x0f) | 0x40);
        $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));
    }
}
