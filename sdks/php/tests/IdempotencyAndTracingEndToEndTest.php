<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;

/**
 * Against a real gateway: every relay call and REST write carries an Idempotency-Key (a retried call is answered
 * once and billed once), every call a W3C traceparent whose trace the gateway carries on to the provider.
 */
final class IdempotencyAndTracingEndToEndTest extends TestCase
{
    private const TRACEPARENT = '/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/';
    private TestGateway $relay;
    private RecordingTransport $wire;
    private Client $client;

    protected function setUp(): void
    {
        $this->relay = TestGateway::get();
        $this->wire = new RecordingTransport();
        [$this->client] = $this->relay->portalClient(['ability:billing.read'], $this->wire);
        $this->relay->resetProvider();
    }

    public function testARelayCallSentAgainWithItsIdempotencyKeyIsAnsweredOnceAndBilledOnce(): void
    {
        $body = ['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'Hello jane.doe@example.com']]];
        $key = 'php-idem-' . bin2hex(random_bytes(6));
        $first = $this->client->chat->completions->create($body, ['idempotencyKey' => $key]);
        $again = $this->client->chat->completions->create($body, ['idempotencyKey' => $key]);
        $this->assertSame([$key, $key], array_map(static fn ($e) => $e['headers']['idempotency-key'], array_slice($this->wire->exchanges, -2)));
        $this->assertSame($first->receipt['jti'], $again->receipt['jti'], 'the stored answer, not a second call');
        $this->assertSame($first['choices'], $again['choices']);
        $this->assertTrue($again->receiptVerified);
        $this->assertCount(1, $this->relay->received(), 'the provider was called once');
        $this->assertSame(1, $this->client->rest->billing->usage()['summary'][0]['calls'], 'billed once');
    }

    public function testEveryCallCarriesATraceparentAndEveryPostAnIdempotencyKey(): void
    {
        $given = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
        $answer = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'hi']]],
            ['traceparent' => $given]);
        $this->assertSame($given, $this->wire->last()['headers']['traceparent']);
        $upstream = $this->relay->received()[0]['headers']['traceparent'] ?? '';
        $this->assertStringStartsWith('00-0af7651916cd43dd8448eb211c80319c-', $upstream, 'the trace reaches the provider');

        $this->client->embeddings->create(['model' => 'local-embed', 'input' => 'hi']);
        $made = $this->wire->last()['headers'];
        $this->assertMatchesRegularExpression(self::TRACEPARENT, $made['traceparent'], 'one is made when none is given');
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $made['idempotency-key']);

        $this->client->rest->billing->balance();
        $read = $this->wire->last()['headers'];
        $this->assertMatchesRegularExpression(self::TRACEPARENT, $read['traceparent']);
        $this->assertArrayNotHasKey('idempotency-key', $read, 'a read is not a write');
        $this->assertTrue($this->client->rest->receipts->verifyOnline($answer->receipt)['valid']);
        $write = $this->wire->last()['headers'];
        $this->assertMatchesRegularExpression(self::TRACEPARENT, $write['traceparent']);
        $this->assertArrayHasKey('idempotency-key', $write, 'a POST carries one');
    }
}
