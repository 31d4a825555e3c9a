<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;
use PrivacyRelay\Exception\ConfigurationException;
use PrivacyRelay\Exception\UnsupportedContentException;

/**
 * The egress policy's two opt-ins, mediaPolicy and passthroughPaths, against a real gateway and the fake provider:
 * an opt-in sends exactly what it names, declared in the attestation's passthrough claim, which the gateway accepts;
 * without them the same body is refused on the device and nothing is sent.
 */
final class EgressOptInsEndToEndTest extends TestCase
{
    private const EMAIL = 'jane.doe@example.com';
    private const PNG_DATA_URL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    private TestGateway $relay;
    private string $keyFile;

    protected function setUp(): void
    {
        $this->relay = TestGateway::get();
        $this->keyFile = $this->relay->keyFile();
        $this->relay->resetProvider();
    }

    private function client(string $mediaPolicy = 'refuse', array $passthroughPaths = []): Client
    {
        return new Client(gatewayUrl: $this->relay->url, apiKeyFile: $this->keyFile, names: 'off', retries: 0,
            mediaPolicy: $mediaPolicy, passthroughPaths: $passthroughPaths);
    }

    private function imageMessages(string $url): array
    {
        return [['role' => 'user', 'content' => [['type' => 'text', 'text' => 'what is this, ' . self::EMAIL . '?'],
            ['type' => 'image_url', 'image_url' => ['url' => $url]]]]];
    }

    /** @return array<string,mixed>|null the v3 attestation's claim in an x-service-attestation header */
    private static function attestedClaim(string $header): ?array
    {
        $outer = json_decode((string) base64_decode(strtr($header, '-_', '+/')), true);
        return $outer['claims']['v3-attestation'] ?? null;
    }

    public function testOptInsSendWhatTheyNameDeclaredAndTheGatewayAcceptsTheClaim(): void
    {
        $c = $this->client('pass', ['/x_trace_note']);
        $r = $c->chat->completions->create(['model' => 'local-chat', 'x_trace_note' => 'ticket 42',
            'messages' => $this->imageMessages(self::PNG_DATA_URL)]);
        $this->assertTrue($r->receiptVerified, json_encode($r->receiptVerification));
        $this->assertSame([['path' => '/messages/0/content/1', 'kind' => 'image'], ['path' => '/x_trace_note', 'kind' => 'field']],
            $r->passthrough);
        $received = $this->relay->received();
        $this->assertCount(1, $received);
        $bodyText = is_string($received[0]['body']) ? $received[0]['body'] : json_encode($received[0]['body']);
        $sent = json_decode($bodyText, true);
        $this->assertStringNotContainsString(self::EMAIL, $bodyText, 'the text part is still tokenised');
        $this->assertSame('ticket 42', $sent['x_trace_note']);
        $this->assertSame(self::PNG_DATA_URL, $sent['messages'][0]['content'][1]['image_url']['url']);
        $this->assertStringContainsString(self::EMAIL, $r['choices'][0]['message']['content'], 'originals restored');

        $claim = self::attestedClaim($c->engine->prepare('chat.completions',
            ['model' => 'm', 'x_trace_note' => 't', 'messages' => []])->headers['x-service-attestation']);
        $this->assertSame([['path' => '/x_trace_note', 'kind' => 'field']], $claim['passthrough']);
        $plain = self::attestedClaim($this->client()->engine->prepare('chat.completions',
            ['model' => 'm', 'messages' => []])->headers['x-service-attestation']);
        $this->assertIsArray($plain);
        $this->assertArrayNotHasKey('passthrough', $plain, 'no opt-in, no claim');
    }

    public function testARemoteImageUrlNamingSomebodyIsRefusedEvenUnderPass(): void
    {
        try {
            $this->client('pass')->chat->completions->create(['model' => 'local-chat',
                'messages' => $this->imageMessages('https://cdn.example.com/' . self::EMAIL . '.png')]);
            $this->fail('no exception');
        } catch (UnsupportedContentException $e) {
            $this->assertSame(415, $e->status);
            $this->assertStringNotContainsString(self::EMAIL, $e->getMessage());
        }
        $this->assertSame([], $this->relay->received(), 'nothing sent');
    }

    public function testWithoutTheOptInsTheSameBodyIsRefusedAndNothingIsSent(): void
    {
        try {
            $this->client()->chat->completions->create(['model' => 'local-chat', 'x_trace_note' => 'ticket 42',
                'messages' => [['role' => 'user', 'content' => 'hi']]]);
            $this->fail('no exception');
        } catch (\PrivacyRelay\Exception\InvalidRequestException $e) {
            $this->assertSame([400, 'unsupported_field', '/x_trace_note'], [$e->status, $e->errorCode, $e->body['details']['path'] ?? null]);
        }
        try {
            $this->client('refuse', ['/x_trace_note'])->chat->completions->create(['model' => 'local-chat',
                'messages' => $this->imageMessages(self::PNG_DATA_URL)]);
            $this->fail('no exception');
        } catch (UnsupportedContentException $e) {
            $this->assertSame(['unsupported_content', '/messages/0/content/1'], [$e->errorCode, $e->body['details']['path'] ?? null]);
            $this->assertStringNotContainsString('iVBOR', $e->getMessage());
        }
        $this->assertSame([], $this->relay->received(), 'nothing sent');
    }

    public function testSettingsAreCheckedAtConstruction(): void
    {
        foreach ([['maybe', []], ['redact', []], ['refuse', ['x_note']], ['refuse', [3]], ['refuse', ['a' => '/x_note']]] as [$media, $paths]) {
            try {
                $this->client($media, $paths);
                $this->fail('accepted ' . json_encode([$media, $paths]));
            } catch (ConfigurationException $e) {
                $this->assertSame('configuration_error', $e->errorCode, json_encode([$media, $paths]));
            }
        }
        $this->assertSame([], $this->relay->received());
    }
}
