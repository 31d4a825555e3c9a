<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->rest->receipts: offline and online verification, the transparency log. */
final class RestReceipts
{
    public function __construct(private Client $client)
    {
    }

    /** Offline, against this gateway's keys: ['valid' => bool, 'reason' => ..., 'checks' => [...]]. */
    public function verify(mixed $receipt): array
    {
        return $this->client->verifyReceipt($receipt);
    }

    /** The gateway's own verdict (POST /api/v1/receipts/verify, no auth). */
    public function verifyOnline(array|string $receipt, array $options = []): array
    {
        $body = is_string($receipt) ? ['receipt' => $receipt] : $receipt;
        return $this->client->call('POST', '/api/v1/receipts/verify', 'none', $body, $options);
    }

    /** The organisation's receipts (portal token), newest first; page with the answer's cursor. */
    public function list(?int $limit = null, ?string $cursor = null, ?string $from = null, ?string $to = null, ?string $model = null,
        array $options = []): array
    {
        $q = http_build_query(array_filter(['limit' => $limit, 'cursor' => $cursor, 'from' => $from, 'to' => $to, 'model' => $model],
            static fn ($v) => $v !== null));
        return $this->client->call('GET', '/api/v1/receipts' . ($q === '' ? '' : "?$q"), 'portal', null, $options);
    }

    public function get(string $jti, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/receipts/' . rawurlencode($jti), 'portal', null, $options);
    }

    /** The relay's countersignature over a receipt (gateway key). */
    public function countersign(array $body, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/receipts/countersign', 'key', $body, $options);
    }

    public function signedTreeHead(array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/transparency/sth', 'none', null, $options);
    }

    public function inclusionProof(string $jti, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/transparency/proof/' . rawurlencode($jti), 'none', null, $options);
    }

    /**
     * Offline check of an inclusion proof against a signed tree head (null: the proof's own) and this gateway's
     * keys; $receipt ties it to one receipt.
     */
    public function verifyInclusionProof(array $proof, ?array $sth = null, mixed $receipt = null): array
    {
        return Native::verifyInclusionProof($proof, $sth, $this->client->jwks(), $receipt === null ? null : ['receipt' => $receipt]);
    }
}
