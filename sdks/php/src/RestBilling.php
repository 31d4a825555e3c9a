<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->rest->billing: the organisation's wallet (portal token). */
final class RestBilling extends RestSection
{
    public function balance(array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/billing/balance', 'portal', null, $options);
    }

    /** Starts a top-up checkout; answers its checkout_url. */
    public function topUp(string $amountUsd, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/billing/topup', 'portal', ['amount_usd' => $amountUsd], $options);
    }

    /** Development payments only (PAYMENTS_PROVIDER=dev): completes a checkout as if it had been paid. */
    public function completeDevCheckout(string|int $id, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/billing/dev/checkouts/' . self::id($id) . '/complete', 'portal', null, $options);
    }

    public function redeemLicence(string $code, array $options = []): array
    {
        return $this->client->call('POST', '/api/v1/billing/redeem-license', 'portal', ['code' => $code], $options);
    }

    /** @param array<string,mixed>|null $query */
    public function ledger(?array $query = null, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/billing/ledger' . self::query($query), 'portal', null, $options);
    }

    /** @param array<string,mixed>|null $query */
    public function usage(?array $query = null, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/billing/usage' . self::query($query), 'portal', null, $options);
    }
}
