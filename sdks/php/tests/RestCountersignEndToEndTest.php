<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;
use PrivacyRelay\Exception\PrivacyRelayException;

/**
 * $client->rest->receipts->countersign against a real gateway: the gateway's countersignature of a v3 attestation
 * made on this device, "relayed" with the receipt's jti when the gateway relayed that call itself, "asserted" when it
 * did not; a hash that is not the attested one or a changed attestation is refused. Nothing is forwarded or debited.
 */
final class RestCountersignEndToEndTest extends TestCase
{
    private TestGateway $relay;
    private RecordingTransport $wire;
    private Client $client;

    protected function setUp(): void
    {
        $this->relay = TestGateway::get();
        $this->wire = new RecordingTransport();
        [$apiKey] = $this->relay->fundedKey();
        $this->client = new Client(gatewayUrl: $this->relay->url, apiKey: $apiKey, names: 'off', transport: $this->wire);
    }

    /** @return array<string,mixed> the envelope of an X-Service-Attestation value */
    private static function envelope(string $header): array
    {
        return json_decode((string) base64_decode(strtr($header, '-_', '+/')), true);
    }

    public function testTheAttestationOfACallTheGatewayRelayedIsCountersignedAsRelayedWithItsReceipt(): void
    {
        $answer = $this->client->chat->completions->create(['model' => 'local-chat',
            'messages' => [['role' => 'user', 'content' => 'Write to jane.doe@example.com']]]);
        $attestation = $this->wire->last()['headers']['x-service-attestation'];
        $call = array_intersect_key($answer->countersignature,
            array_flip(['provider', 'model', 'hash_upstream_request', 'hash_upstream_response']));
        $this->assertCount(4, $call);
        $balance = $this->client->rest->self->balance();

        $signed = $this->client->rest->receipts->countersign(['attestation' => $attestation] + $call);
        $sent = $this->wire->last();
        $this->assertSame(['POST', '/api/v1/receipts/countersign', 200], [$sent['method'], $sent['path'], $sent['status']]);
        $this->assertMatchesRegularExpression('/^Bearer svc_/', $sent['headers']['authorization'], 'the gateway key, not a portal token');
        $this->assertSame('v3-countersignature', $signed['v']);
        $this->assertSame(['relayed', $answer->receipt['jti']], [$signed['witness'], $signed['receipt_jti']]);
        $this->assertSame(self::envelope($attestation)['jti'], $signed['attestation_jti']);
        $this->assertSame($call, array_intersect_key($signed, $call));
        $this->assertTrue($this->client->verifyReceipt($signed)['valid'], 'verifies offline against the gateway keys');
        $this->assertFalse($this->client->verifyReceipt(['witness' => 'asserted'] + $signed)['valid'], 'a changed countersignature does not');
        $this->assertSame($balance, $this->client->rest->self->balance(), 'nothing debited');
    }

    public function testAnAttestationOfACallRelayedElsewhereIsAssertedAndNothingIsForwarded(): void
    {
        $prepared = $this->client->engine->prepare('chat.completions', ['model' => 'local-chat',
            'messages' => [['role' => 'user', 'content' => 'Call +44 20 7946 0958']]]);
        $attestation = $prepared->headers['x-service-attestation'];
        $egress = self::envelope($attestation)['claims']['v3-attestation']['egress_sha256'];
        $this->assertSame(hash('sha256', $prepared->bodyText), $egress, 'the attestation is of the exact bytes');
        $call = ['provider' => 'elsewhere', 'model' => 'their-model', 'hash_upstream_request' => $egress,
            'hash_upstream_response' => hash('sha256', 'the answer they got')];
        $this->relay->resetProvider();

        $signed = $this->client->rest->receipts->countersign(['attestation' => $attestation] + $call);
        $this->assertSame(200, $this->wire->last()['status']);
        $this->assertSame(['asserted', null], [$signed['witness'], $signed['receipt_jti']]);
        $this->assertSame($call, array_intersect_key($signed, $call));
        $this->assertTrue($this->client->verifyReceipt($signed)['valid']);
        $this->assertSame([], $this->relay->received(), 'nothing reached the provider');
    }

    public function testAHashThatIsNotTheAttestedOneOrAChangedAttestationIs422(): void
    {
        $prepared = $this->client->engine->prepare('chat.completions', ['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'hi']]]);
        $header = $prepared->headers['x-service-attestation'];
        $call = ['provider' => 'elsewhere', 'model' => 'm', 'hash_upstream_request' => self::envelope($header)['claims']['v3-attestation']['egress_sha256'],
            'hash_upstream_response' => str_repeat('0', 64)];
        // decoded as objects, so the envelope's empty objects stay objects when it is sent back changed
        $changed = json_decode((string) base64_decode(strtr($header, '-_', '+/')));
        $changed->claims->{'v3-attestation'}->egress_sha256 = str_repeat('a', 64);
        foreach ([
            'attestation_mismatch' => ['attestation' => $header, 'hash_upstream_request' => str_repeat('b', 64)] + $call,
            'attestation_invalid' => ['attestation' => $changed, 'hash_upstream_request' => str_repeat('a', 64)] + $call,
        ] as $code => $body) {
            try {
                $this->client->rest->receipts->countersign($body);
                $this->fail("$code: accepted");
            } catch (PrivacyRelayException $e) {
                $this->assertSame([422, $code], [$e->status, $e->errorCode]);
                $this->assertNotNull($e->requestId);
            }
        }
    }
}
