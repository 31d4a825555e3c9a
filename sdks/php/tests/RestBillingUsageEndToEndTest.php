<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;

/**
 * $client->rest->billing->usage() against a real gateway: every relayed call of the organisation is a record
 * naming its receipt, the daily totals add the records up, and the wallet went down by exactly what was billed.
 */
final class RestBillingUsageEndToEndTest extends TestCase
{
    private TestGateway $relay;
    private RecordingTransport $wire;
    private Client $client;

    protected function setUp(): void
    {
        $this->relay = TestGateway::get();
        $this->wire = new RecordingTransport();
        [$this->client] = $this->relay->portalClient(['ability:billing.read'], $this->wire);
    }

    public function testEachCallIsARecordWithItsReceiptTheTotalsAddUpAndTheWalletPaidExactlyThat(): void
    {
        $before = $this->client->rest->billing->balance();
        $jtis = [];
        foreach (['one', 'two'] as $text) {
            $jtis[] = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => $text]]])->receipt['jti'];
        }
        $usage = $this->client->rest->billing->usage();
        $this->assertSame(['GET', '/api/v1/billing/usage', 200], [$this->wire->last()['method'], $this->wire->last()['path'], $this->wire->last()['status']]);
        $this->assertSame(array_reverse($jtis), array_column($usage['records'], 'receipt_jti'), 'one record per call, newest first');
        $this->assertSame(['local-chat'], array_values(array_unique(array_column($usage['records'], 'model'))));
        $billed = array_sum(array_column($usage['records'], 'billed_micros'));
        $this->assertGreaterThan(0, $billed);
        $this->assertCount(1, $usage['summary']);
        $this->assertSame([2, $billed], [$usage['summary'][0]['calls'], $usage['summary'][0]['billed_micros']]);
        $this->assertSame([], $usage['failures']);
        $after = $this->client->rest->billing->balance();
        $this->assertSame($before['balance_micros'] - $billed, $after['balance_micros'], 'the wallet paid what usage says');

        $first = $this->client->rest->billing->usage(['limit' => 1]);
        $this->assertSame([$jtis[1]], array_column($first['records'], 'receipt_jti'));
        $this->assertNotNull($first['next_cursor']);
        $second = $this->client->rest->billing->usage(['limit' => 1, 'cursor' => $first['next_cursor']]);
        $this->assertSame([$jtis[0]], array_column($second['records'], 'receipt_jti'), 'the next page');

        // from/to bound the daily totals (the records are a page of all of them)
        $tomorrow = gmdate('Y-m-d', time() + 86400);
        $later = $this->client->rest->billing->usage(['from' => $tomorrow, 'to' => gmdate('Y-m-d', time() + 2 * 86400)]);
        $this->assertSame(["{$tomorrow}T00:00:00.000Z", [], []], [$later['from'], $later['summary'], $later['failures']],
            'no totals in a window after the calls');
    }
}
