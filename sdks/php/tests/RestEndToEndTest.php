<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;
use PrivacyRelay\Exception\AuthenticationException;
use PrivacyRelay\Exception\ConfigurationException;
use PrivacyRelay\Exception\InvalidRequestException;
use PrivacyRelay\Exception\NotFoundException;
use PrivacyRelay\JwksCache;
use PrivacyRelay\Native;
use PrivacyRelay\WebhookDeduper;

/** The portal-token half of the REST capability set against a real gateway process. */
final class RestEndToEndTest extends TestCase
{
    private const ABILITIES = ['ability:keys.read', 'ability:keys.write', 'ability:billing.read', 'ability:billing.write',
        'webhooks.manage', 'webhooks.read'];
    private TestGateway $relay;
    private Client $client;
    private string $prefix;

    protected function setUp(): void
    {
        $this->relay = TestGateway::get();
        [$apiKey, $this->prefix] = $this->relay->fundedKey();
        $portal = $this->relay->portalToken($this->prefix, self::ABILITIES);
        $this->client = new Client(gatewayUrl: $this->relay->url, apiKey: $apiKey, portalToken: $portal, names: 'off', retries: 0);
    }

    public function testKeyLifecycleCreateReplayedUpdateRotateRevoke(): void
    {
        $idem = 'php-key-' . bin2hex(random_bytes(6));
        $created = $this->client->rest->keys->create(name: 'php-sdk', options: ['idempotencyKey' => $idem]);
        $this->assertMatchesRegularExpression('/^svc_/', $created['api_key']);
        $again = $this->client->rest->keys->create(name: 'php-sdk', options: ['idempotencyKey' => $idem]);
        $this->assertSame($created['api_key'], $again['api_key'], 'replayed by its Idempotency-Key, not created twice');
        $listed = array_filter($this->client->rest->keys->list()['keys'], static fn ($k) => $k['id'] === $created['id']);
        $this->assertCount(1, $listed);
        $mine = array_values($listed)[0];
        $this->assertSame(['permissions' => $mine['permissions'] ?? null, 'models' => $mine['models'] ?? null],
            $this->client->rest->keys->scopes($created['id']));
        $this->assertNull($this->client->rest->keys->scopes('key_does_not_exist'));
        $this->assertSame('php-sdk-2', $this->client->rest->keys->update($created['id'], ['name' => 'php-sdk-2'])['name']);
        $rotated = $this->client->rest->keys->rotate($created['id']);
        $this->assertSame($created['id'], $rotated['replaces']);
        $this->assertNotSame($created['api_key'], $rotated['api_key']);
        $this->assertSame('revoked', $this->client->rest->keys->revoke($created['id'])['status']);
        try {
            (new Client(gatewayUrl: $this->relay->url, apiKey: $created['api_key'], retries: 0))->rest->self->key();
            $this->fail('a revoked key is refused');
        } catch (AuthenticationException $e) {
            $this->assertSame(401, $e->status);
        }
        $this->assertSame($rotated['key_prefix'],
            (new Client(gatewayUrl: $this->relay->url, apiKey: $rotated['api_key'], retries: 0))->rest->self->key()['key_prefix']);
    }

    public function testReceiptsListGetCountersignAndALiveInclusionProof(): void
    {
        $answer = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'hi']]]);
        $jti = $answer->receipt['jti'];
        $this->assertStringContainsString($jti, json_encode($this->client->rest->receipts->list(limit: 10)['receipts']));
        $got = $this->client->rest->receipts->get($jti);
        $this->assertSame($jti, $got['jti'] ?? $got['receipt']['jti'] ?? null);
        $sth = $this->client->rest->receipts->signedTreeHead();
        $this->assertGreaterThanOrEqual(1, $sth['tree_size']);
        $proof = $this->client->rest->receipts->inclusionProof($jti);
        $verdict = $this->client->rest->receipts->verifyInclusionProof($proof, null, $answer->receipt);
        $this->assertTrue($verdict['valid'], json_encode($verdict));
        $other = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'again']]]);
        $this->assertFalse($this->client->rest->receipts->verifyInclusionProof($proof, null, $other->receipt)['valid'],
            'the proof is bound to its own receipt');
    }

    public function testThisKeysReceiptsVerifyAsOneChainAndAGapIsABreak(): void
    {
        $receipts = [];
        foreach (['one', 'two', 'three'] as $text) {
            $receipts[] = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => $text]]])->receipt;
        }
        $intact = $this->client->verifyReceiptChain($receipts);
        $this->assertTrue($intact['valid'], json_encode($intact));
        $this->assertSame(3, $intact['verified']);
        $gap = $this->client->verifyReceiptChain([$receipts[0], $receipts[2]]);
        $this->assertFalse($gap['valid']);
        $this->assertSame('gap', $gap['break']['kind']);
        $this->assertTrue($this->client->verifyReceiptChain([$receipts[0], $receipts[2]], allowGaps: true)['valid']);
    }

    public function testAReceiptSignedAfterAGatewayKeyRotationVerifiesAfterOneJwksRefetch(): void
    {
        $before = array_column($this->client->jwks()['keys'], 'kid');
        $admin = $this->relay->portalToken($this->prefix, ['ability:admin']);
        [$status, $rotation] = $this->relay->http('POST', "{$this->relay->url}/api/admin/receipts/keys/rotate", new \stdClass(),
            ['authorization' => "Bearer $admin"]);
        $this->assertSame(200, $status, json_encode($rotation));
        $this->assertNotContains($rotation['kid'], $before);
        $answer = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'after the rotation']]]);
        $this->assertSame($rotation['kid'], $answer->receipt['kid']);
        $this->assertTrue($answer->receiptVerified, json_encode($answer->receiptVerification));
        $this->assertContains($rotation['kid'], array_column($this->client->jwks()['keys'], 'kid'));
    }

    public function testACachedJwksFileVerifiesALiveReceiptOfflineAndABadFileIsRefused(): void
    {
        $answer = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => 'hi']]]);
        $path = sys_get_temp_dir() . '/pr-php-jwks-' . bin2hex(random_bytes(4)) . '.json';
        try {
            $this->assertNull(JwksCache::load($path), 'no cache yet');
            JwksCache::save($path, $this->client->jwks());
            $cached = JwksCache::load($path);
            $this->assertTrue(Native::verifyReceipt($answer->receipt, $cached)['valid']);
            $this->assertFalse(Native::verifyReceipt(['model' => 'other'] + $answer->receipt, $cached)['valid']);
            file_put_contents($path, '{"keys":[{"kty":"EC","crv":"P-256","kid":"k","x":"a","y":"b","d":"secret"}]}');
            try {
                JwksCache::load($path);
                $this->fail('a private key in the cache is refused');
            } catch (ConfigurationException $e) {
                $this->assertSame('invalid_jwks', $e->errorCode);
            }
        } finally {
            @unlink($path);
        }
    }

    public function testBillingTopUpThroughTheDevCheckoutCreditsTheWallet(): void
    {
        $before = $this->client->rest->billing->balance();
        $checkout = $this->client->rest->billing->topUp('5');
        $this->assertArrayHasKey('checkout_url', $checkout);
        $id = $checkout['checkout_id'] ?? $checkout['id'] ?? basename(parse_url($checkout['checkout_url'], PHP_URL_PATH));
        $this->client->rest->billing->completeDevCheckout($id);
        $after = $this->client->rest->billing->balance();
        $this->assertNotEquals($before, $after, 'credited');
        $this->assertIsArray($this->client->rest->billing->ledger());
        try {
            $this->client->rest->billing->redeemLicence('not-a-licence');
            $this->fail('a bad licence is refused');
        } catch (InvalidRequestException $e) {
            $this->assertSame(400, $e->status);
        }
    }

    public function testWebhookEndpointCrudAndAnUnknownEndpointIs404(): void
    {
        $created = $this->client->rest->webhooks->endpoints->create('http://127.0.0.1:9/hook', ['*']);
        $this->assertArrayHasKey('secret', $created);
        $id = $created['id'];
        $this->assertArrayNotHasKey('secret', $this->client->rest->webhooks->endpoints->get($id), 'the secret is shown once');
        $listed = $this->client->rest->webhooks->endpoints->list();
        $this->assertContains($id, array_column($listed['endpoints'] ?? $listed['data'] ?? $listed, 'id'), json_encode($listed));
        $this->assertNotSame($created['secret'], $this->client->rest->webhooks->endpoints->rotateSecret($id)['secret'] ?? $created['secret']);
        $this->client->rest->webhooks->endpoints->delete($id);
        $this->expectException(NotFoundException::class);
        $this->client->rest->webhooks->endpoints->get($id);
    }

    public function testPortalRoutesNeedAPortalTokenAndABadOneIs401(): void
    {
        [$apiKey] = $this->relay->fundedKey();
        $noPortal = new Client(gatewayUrl: $this->relay->url, apiKey: $apiKey, retries: 0);
        try {
            $noPortal->rest->keys->list();
            $this->fail('no portal token');
        } catch (ConfigurationException $e) {
            $this->assertSame('configuration_error', $e->errorCode);
        }
        $bad = new Client(gatewayUrl: $this->relay->url, apiKey: $apiKey, portalToken: 'spt_' . str_repeat('a', 52), retries: 0);
        $this->expectException(AuthenticationException::class);
        $bad->rest->keys->list();
    }

    public function testDemoKeyIsAGatewayKey(): void
    {
        $demo = $this->client->rest->demoKey();
        $this->assertMatchesRegularExpression('/^svc_/', $demo['api_key']);
    }

    public function testAWebhookTestEventIsDeliveredToAPhpReceiverVerifiedAndDeduplicated(): void
    {
        $receiver = new WebhookReceiver();
        $endpoint = $this->client->rest->webhooks->endpoints->create($receiver->url(), ['webhook.test']);
        $this->client->rest->webhooks->endpoints->test($endpoint['id']);
        $got = $receiver->next();
        $receiver->stop();
        [$body, $headers, $secret] = [$got['body'], $got['headers'], $endpoint['secret']];
        $this->assertSame(['ok' => true], Client::verifyWebhook($body, $headers, $secret));
        $this->assertSame('bad_signature', Client::verifyWebhook(str_replace('webhook.test', 'webhook.tesT', $body), $headers, $secret)['code']);
        $this->assertSame('stale_timestamp', Native::verifyWebhook($body, $headers, $secret, ['now_seconds' => time() + 3600])['code']);
        $this->assertFalse(Client::verifyWebhook($body, $headers, 'whsec_wrong')['ok']);
        $dedupe = new WebhookDeduper();
        $id = WebhookDeduper::eventIdOf($body, $headers);
        $this->assertNotNull($id);
        $this->assertFalse($dedupe->seen($id));
        $this->assertTrue($dedupe->seen($id), 'a redelivery is recognised');
        $this->assertStringContainsString('webhook.test', json_encode($this->client->rest->webhooks->deliveries->list()));
    }
}
