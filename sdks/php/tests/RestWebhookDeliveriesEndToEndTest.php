<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;
use PrivacyRelay\Exception\NotFoundException;

/**
 * $client->rest->webhooks against a real gateway delivering to a PHP receiver on 127.0.0.1: an endpoint the gateway
 * paused (its receiver answered 410 Gone) is resumed, the dead delivery is read with its payload and attempts, and a
 * replay is a new delivery that reaches the receiver signed under the endpoint's secret.
 */
final class RestWebhookDeliveriesEndToEndTest extends TestCase
{
    private TestGateway $relay;
    private RecordingTransport $wire;
    private Client $client;

    protected function setUp(): void
    {
        $this->relay = TestGateway::get();
        $this->wire = new RecordingTransport();
        [$this->client] = $this->relay->portalClient(['webhooks.manage', 'webhooks.read'], $this->wire);
    }

    public function testA410PausesTheEndpointResumeReactivatesItAndAReplayOfTheDeadDeliveryIsDeliveredAgain(): void
    {
        $receiver = new WebhookReceiver([410, 200]);
        $endpoints = $this->client->rest->webhooks->endpoints;
        $deliveries = $this->client->rest->webhooks->deliveries;
        $endpoint = $endpoints->create($receiver->url(), ['webhook.test']);
        $queued = $endpoints->test($endpoint['id']);
        $this->assertSame(202, $this->wire->last()['status']);
        $this->assertSame(['webhook.test', 'pending', $endpoint['id']], [$queued['event'], $queued['status'], $queued['endpoint_id']]);

        $first = $receiver->next();
        $this->assertSame(410, $first['status']);
        $this->assertSame((string) $queued['id'], $first['headers']['x-service-webhook-delivery-id']);
        $paused = TestGateway::eventually(static function () use ($endpoints, $endpoint) {
            $e = $endpoints->get($endpoint['id']);
            return $e['status'] === 'paused' ? $e : null;
        }, 'the endpoint paused after a 410');
        $this->assertStringContainsString('410', (string) $paused['paused_reason']);

        $dead = $deliveries->get($queued['id']);
        $this->assertSame(200, $this->wire->last()['status']);
        $this->assertSame(['dead', 410, 1], [$dead['status'], $dead['last_http_code'], $dead['attempt_count']]);
        // the body the receiver got, but for its timestamp: the time of the attempt, not of the event
        $received = json_decode($first['body'], true);
        $this->assertEquals(array_diff_key($received, ['timestamp' => 0]), array_diff_key($dead['payload'], ['timestamp' => 0]));
        $this->assertGreaterThanOrEqual($dead['payload']['timestamp'], $received['timestamp']);
        $this->assertSame([410], array_column($dead['attempts'], 'http_code'));

        $resumed = $endpoints->resume($endpoint['id']);
        $this->assertSame(['POST', "/api/v1/webhooks/endpoints/{$endpoint['id']}/resume", 200],
            [$this->wire->last()['method'], $this->wire->last()['path'], $this->wire->last()['status']]);
        $this->assertArrayHasKey('idempotency-key', $this->wire->last()['headers'], 'a write carries an Idempotency-Key');
        $this->assertSame(['active', null], [$resumed['status'], $resumed['paused_reason']]);
        $this->assertSame('active', $endpoints->get($endpoint['id'])['status'], 'stored as active');

        $replay = $deliveries->replay($queued['id']);
        $this->assertSame(201, $this->wire->last()['status']);
        $this->assertArrayHasKey('idempotency-key', $this->wire->last()['headers']);
        $this->assertNotSame($queued['id'], $replay['id'], 'a replay is a new delivery');
        $this->assertSame([$queued['id'], $endpoint['id'], 'webhook.test'], [$replay['replay_of'], $replay['endpoint_id'], $replay['event']]);

        $second = $receiver->next();
        $receiver->stop();
        $this->assertSame((string) $replay['id'], $second['headers']['x-service-webhook-delivery-id']);
        $this->assertSame(['ok' => true], Client::verifyWebhook($second['body'], $second['headers'], $endpoint['secret']));
        $this->assertEquals($dead['payload']['data'], json_decode($second['body'], true)['data'], 'the same event data again');
        $delivered = TestGateway::eventually(static function () use ($deliveries, $replay) {
            $d = $deliveries->get($replay['id']);
            return $d['status'] === 'delivered' ? $d : null;
        }, 'the replay recorded as delivered');
        $this->assertSame([200, 1], [$delivered['last_http_code'], $delivered['attempt_count']]);
        $listed = $deliveries->list(['endpoint_id' => $endpoint['id']])['deliveries'];
        $this->assertSame([$replay['id'], $queued['id']], array_column($listed, 'id'), 'newest first, this endpoint only');
    }

    public function testAnUnknownDeliveryOrEndpointIs404(): void
    {
        foreach ([
            fn () => $this->client->rest->webhooks->deliveries->get(987654),
            fn () => $this->client->rest->webhooks->deliveries->replay(987654),
            fn () => $this->client->rest->webhooks->endpoints->resume(987654),
        ] as $call) {
            try {
                $call();
                $this->fail('an unknown id is refused');
            } catch (NotFoundException $e) {
                $this->assertSame([404, 'not_found'], [$e->status, $e->errorCode]);
                $this->assertSame(404, $this->wire->last()['status']);
            }
        }
        $this->assertSame([], $this->client->rest->webhooks->deliveries->list()['deliveries'], 'nothing was queued');
    }
}
