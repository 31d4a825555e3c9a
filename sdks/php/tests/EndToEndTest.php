<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;
use PrivacyRelay\Exception\AuthenticationException;
use PrivacyRelay\Exception\GatewayIdentityException;
use PrivacyRelay\Exception\InsufficientBalanceException;
use PrivacyRelay\Exception\InvalidRequestException;
use PrivacyRelay\Exception\NotFoundException;
use PrivacyRelay\Exception\PrivacyRelayException;
use PrivacyRelay\Exception\StreamException;
use PrivacyRelay\Exception\UnsupportedContentException;
use PrivacyRelay\Response;
use PrivacyRelay\Stream;

/** Against a real gateway process and the fake provider: what the provider saw holds no original value. */
final class EndToEndTest extends TestCase
{
    private const EMAIL = 'jane.doe@example.com';
    private const PHONE = '+44 20 7946 0958';
    private TestGateway $relay;
    private Client $client;
    private string $keyFile;

    protected function setUp(): void
    {
        $this->relay = TestGateway::get();
        $this->keyFile = $this->relay->keyFile();
        $this->relay->resetProvider();
        $this->client = new Client(gatewayUrl: $this->relay->url, apiKeyFile: $this->keyFile, retries: 0);
    }

    private function assertNoOriginal(): void
    {
        $text = implode("\n", array_map(static fn ($r) => is_string($r['body'] ?? null) ? $r['body'] : json_encode($r['body'] ?? null),
            $this->relay->received()));
        $this->assertNotSame('', $text, 'the provider received something');
        $this->assertStringNotContainsString(self::EMAIL, $text);
        $this->assertStringNotContainsString(self::PHONE, $text);
    }

    public function testChatCompletion(): void
    {
        $r = $this->client->chat->completions->create(['model' => 'local-chat',
            'messages' => [['role' => 'user', 'content' => 'Write to ' . self::EMAIL . ' or call ' . self::PHONE . ', please.']]]);
        $this->assertInstanceOf(Response::class, $r);
        $content = $r['choices'][0]['message']['content'];
        $this->assertIsString($content);
        $this->assertNotNull($r->requestId);
        $this->assertNotNull($r->receipt, 'X-Service-Receipt-V2 present');
        $this->assertTrue($r->receiptVerified, json_encode($r->receiptVerification));
        $this->assertStringNotContainsString(self::EMAIL, json_encode($r->tokenisedRequest));
        $this->assertNoOriginal();
        // the fake provider echoes the (tokenised) prompt; the client restored the originals here
        $this->assertStringContainsString(self::EMAIL, $content);
        $this->assertStringContainsString(self::PHONE, $content);
        $last = $this->relay->received()[0];
        $this->assertArrayNotHasKey('x-service-attestation', array_change_key_case($last['headers'] ?? []), 'the attestation stays at the gateway');
        $this->assertTrue($this->client->verifyReceipt($r->receipt)['valid']);
    }

    public function testChatStream(): void
    {
        $s = $this->client->chat->completions->create(['model' => 'local-chat', 'stream' => true,
            'messages' => [['role' => 'user', 'content' => 'Mail ' . self::EMAIL . ' today.']]]);
        $this->assertInstanceOf(Stream::class, $s);
        $text = '';
        $n = 0;
        foreach ($s as $chunk) {
            $n++;
            $text .= $chunk['choices'][0]['delta']['content'] ?? '';
        }
        $this->assertGreaterThan(1, $n);
        $this->assertStringNotContainsString('<EMAIL_', $text, 'aliases restored across chunk boundaries');
        $this->assertStringContainsString(self::EMAIL, $text);
        $this->assertNotNull($s->receipt, 'receipt-v2 trailer');
        $this->assertTrue($s->receiptVerified, json_encode($s->receiptVerification));
        $this->assertNoOriginal();
        $this->expectException(StreamException::class);
        foreach ($s as $_) {
        }
    }

    public function testAStreamTheUpstreamCutsMidAliasIsAStreamExceptionWithNoOriginalMadeUp(): void
    {
        // the fake provider (pieces of 5 characters) drops the connection after 4 frames: inside the echoed alias
        $this->relay->http('POST', "{$this->relay->providerUrl}/_fake/behaviour", ['kind' => 'cut-stream', 'afterChunks' => 4]);
        try {
            $s = $this->client->chat->completions->create(['model' => 'local-chat', 'stream' => true,
                'messages' => [['role' => 'user', 'content' => 'Mail ' . self::EMAIL . ' today.']]]);
            $text = '';
            try {
                foreach ($s as $chunk) {
                    $text .= $chunk['choices'][0]['delta']['content'] ?? '';
                }
                $this->fail('a cut stream ended without an error');
            } catch (StreamException $e) {
                $this->assertSame('stream_error', $e->errorCode);
                $this->assertNotNull($e->requestId);
            }
            $this->assertStringStartsWith('Echo: Mail ', $text);
            $this->assertStringContainsString('<EMAIL_', $text, 'the cut alias comes out as it came');
            $this->assertStringNotContainsString(self::EMAIL, $text, 'no original restored from half an alias');
            $this->assertNull($s->receipt, 'no receipt for a cut answer');
            $this->assertNoOriginal();
        } finally {
            $this->relay->resetProvider();
        }
    }

    public function testMessagesJsonAndStream(): void
    {
        $body = ['model' => 'local-chat', 'max_tokens' => 64, 'messages' => [['role' => 'user', 'content' => 'Call ' . self::PHONE . '.']]];
        $r = $this->client->messages->create($body);
        $this->assertTrue($r->receiptVerified);
        $text = '';
        $stop = false;
        foreach ($this->client->messages->create($body + ['stream' => true]) as $e) {
            $stop = $stop || ($e['type'] ?? null) === 'message_stop';
            if (($e['type'] ?? null) === 'content_block_delta') {
                $text .= $e['delta']['text'] ?? '';
            }
        }
        $this->assertTrue($stop);
        $this->assertStringContainsString(self::PHONE, $text);
        $this->assertNoOriginal();
    }

    public function testResponsesJsonStreamAndCountTokens(): void
    {
        $body = ['model' => 'local-chat', 'input' => 'Write to ' . self::EMAIL . ' today.'];
        $r = $this->client->responses->create($body);
        $this->assertTrue($r->receiptVerified, json_encode($r->receiptVerification));
        $this->assertStringContainsString(self::EMAIL, json_encode($r->data, JSON_UNESCAPED_SLASHES));
        $s = $this->client->responses->create($body + ['stream' => true]);
        $text = '';
        $done = null;
        $seq = [];
        foreach ($s as $e) {
            if (($e['type'] ?? null) === 'response.output_text.delta') {
                $text .= $e['delta'];
            }
            if (($e['type'] ?? null) === 'response.output_text.done') {
                $done = $e['text'];
            }
            if (is_int($e['sequence_number'] ?? null)) {
                $seq[] = $e['sequence_number'];
            }
        }
        $this->assertStringContainsString(self::EMAIL, $text);
        $this->assertStringNotContainsString('<EMAIL_', $text);
        $this->assertSame($done, $text, 'the deltas add up to the done text');
        $sorted = $seq;
        sort($sorted);
        $this->assertSame($sorted, $seq, 'sequence numbers stay increasing');
        $this->assertTrue($s->receiptVerified, json_encode($s->receiptVerification));
        $n = $this->client->messages->countTokens(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'Call ' . self::PHONE]]]);
        $this->assertIsInt($n['input_tokens']);
        $this->assertNoOriginal();
    }

    public function testEmbeddings(): void
    {
        $r = $this->client->embeddings->create(['model' => 'local-embed', 'input' => 'Contact ' . self::EMAIL]);
        $this->assertIsArray($r['data']);
        $this->assertTrue($r->receiptVerified);
        $this->assertNoOriginal();
    }

    public function testRestSelfReceiptsTransparencyAndSelfServiceKey(): void
    {
        $key = trim((string) file_get_contents($this->keyFile));
        $me = $this->client->rest->self->key();
        $this->assertStringStartsWith($me['key_prefix'], $key);
        $this->assertIsArray($this->client->rest->self->balance());
        $this->assertIsArray($this->client->rest->self->usage());
        $r = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'hi']]]);
        $this->assertTrue($this->client->rest->receipts->verify($r->receipt)['valid']);
        $this->assertIsArray($this->client->rest->receipts->signedTreeHead());
        $online = $this->client->rest->receipts->verifyOnline($r->receipt);
        $this->assertTrue($online['valid'] ?? null, json_encode($online));
        $new = $this->client->rest->selfServiceKey(options: ['idempotencyKey' => 'php-ss-' . bin2hex(random_bytes(6))]);
        $this->assertMatchesRegularExpression('/^svc_/', $new['api_key']);
    }

    public function testARefusalAfterTheKeyWasAcceptedCarriesASignedFailedReceiptAndSendsNothing(): void
    {
        [$unfunded] = $this->relay->fundedKey('0');
        $client = new Client(gatewayUrl: $this->relay->url, apiKey: $unfunded, retries: 0);
        $failed = [];
        foreach ([
            'local-chat' => [402, 'insufficient_balance', InsufficientBalanceException::class],
            'no-such-model' => [404, 'model_not_found', NotFoundException::class],
        ] as $model => [$status, $code, $class]) {
            try {
                $client->chat->completions->create(['model' => $model, 'messages' => [['role' => 'user', 'content' => 'Mail ' . self::EMAIL]]]);
                $this->fail("$model: no exception");
            } catch (PrivacyRelayException $e) {
                $this->assertSame([$class, $status, $code], [$e::class, $e->status, $e->errorCode]);
                $r = $e->failedReceipt;
                $this->assertIsArray($r, 'X-Service-Receipt-Failed decoded');
                $this->assertSame(['failed', $status, $code, $e->requestId], [$r['outcome'], $r['status'], $r['error_code'], $r['extensions']['request_id']]);
                $this->assertTrue($client->verifyReceipt($r)['valid'], json_encode($client->verifyReceipt($r)));
                $this->assertFalse($client->verifyReceipt(['status' => 200] + $r)['valid'], 'a changed failed receipt does not verify');
                $failed[] = $r;
            }
        }
        $this->assertTrue($client->verifyReceiptChain($failed)['valid'], 'the refusals are one chain');
        $this->assertSame([], $this->relay->received(), 'nothing forwarded');
    }

    public function testModels(): void
    {
        $this->assertIsArray($this->client->models->list()['data']);
    }

    public function testErrorsCarryStatusCodeRequestId(): void
    {
        $c = new Client(gatewayUrl: $this->relay->url, apiKey: 'svc_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', retries: 0);
        try {
            $c->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'hi']]]);
            $this->fail('no exception');
        } catch (AuthenticationException $e) {
            $this->assertSame(401, $e->status);
            $this->assertNotSame('', $e->errorCode);
            $this->assertNotNull($e->requestId);
        }
    }

    public function testAFieldTheEgressPolicyRefusesIsNotForwarded(): void
    {
        try {
            $this->client->chat->completions->create(['model' => 'local-chat', 'invented_field' => self::EMAIL,
                'messages' => [['role' => 'user', 'content' => 'hi']]]);
            $this->fail('no exception');
        } catch (InvalidRequestException $e) {
            $this->assertSame(400, $e->status);
            $this->assertContains($e->errorCode, ['unsupported_field', 'egress_policy_violation']);
        }
        $this->assertSame([], $this->relay->received(), 'nothing forwarded');
    }

    public function testEndUserIdsGoAsStableAliasesAndImagesAreRefusedOnTheDevice(): void
    {
        $body = ['model' => 'local-chat', 'user' => self::EMAIL, 'metadata' => ['owner' => self::EMAIL],
            'messages' => [['role' => 'user', 'name' => self::EMAIL, 'content' => 'hi']]];
        $r = $this->client->chat->completions->create($body);
        $this->assertTrue($r->receiptVerified, json_encode($r->receiptVerification));
        $this->assertMatchesRegularExpression('/^USER_/', $r->tokenisedRequest['user']);
        $this->assertSame($r->tokenisedRequest['user'], $r->tokenisedRequest['metadata']['owner'], 'device-stable alias');
        $this->assertNoOriginal();
        $this->relay->resetProvider();
        try {
            $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => [
                ['type' => 'text', 'text' => self::EMAIL], ['type' => 'image_url', 'image_url' => ['url' => 'data:image/png;base64,AAAA']]]]]]);
            $this->fail('no exception');
        } catch (UnsupportedContentException $e) {
            $this->assertSame(415, $e->status);
            $this->assertSame('/messages/0/content/1', $e->body['details']['path']);
        }
        $this->assertSame([], $this->relay->received(), 'nothing sent');
    }

    public function testNotAGatewayGetsNothing(): void
    {
        $c = new Client(gatewayUrl: $this->relay->providerUrl, apiKeyFile: $this->keyFile, retries: 0);
        try {
            $c->chat->completions->create(['model' => 'm', 'messages' => [['role' => 'user', 'content' => self::EMAIL]]]);
            $this->fail('no exception');
        } catch (GatewayIdentityException $e) {
            $this->assertSame('gateway_identity_failed', $e->errorCode);
        }
        foreach ($this->relay->received() as $r) {
            $this->assertStringNotContainsString(self::EMAIL, json_encode($r));
        }
    }
}
