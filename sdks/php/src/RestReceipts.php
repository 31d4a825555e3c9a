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
        return $this->client->call('POST', '/api/v1/receipts/verify', false, $body, $options);
    }

    public function signedTreeHead(array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/transparency/sth', false, null, $options);
    }

    public function inclusionProof(string $jti, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/transparency/proof/' . rawurlencode($jti), false, null, $options);
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
