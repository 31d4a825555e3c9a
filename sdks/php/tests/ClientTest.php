<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;
use PrivacyRelay\Device;
use PrivacyRelay\Exception\ConfigurationException;
use PrivacyRelay\Exception\ConnectionException;
use PrivacyRelay\Exception\EngineUnavailableException;
use PrivacyRelay\Exception\PrivacyRelayException;
use PrivacyRelay\Exception\RateLimitException;
use PrivacyRelay\Exception\ServerException;
use PrivacyRelay\Exception\StreamException;
use PrivacyRelay\Native;
use PrivacyRelay\SseDetokeniser;
use PrivacyRelay\Transport;

/** Client rules without a gateway: URLs, key files, library, SSE, retries, offline verification. */
final class ClientTest extends TestCase
{
    public function testGatewayUrlRules(): void
    {
        $this->assertSame('https://relay.example/base', Device::parseGatewayUrl('https://relay.example/base/'));
        $this->assertSame('http://127.0.0.1:8080', Device::parseGatewayUrl('http://127.0.0.1:8080'));
        $this->assertSame('http://localhost:1', Device::parseGatewayUrl('http://localhost:1'));
        $this->assertSame('http://[::1]:8080', Device::parseGatewayUrl('http://[::1]:8080'));
        foreach (['http://relay.example', 'ftp://x', '', 'https://u:p@relay.example', 'https://relay.example/?a=1', 'relay.example',
            'http://10.0.0.1', 'http://0.0.0.0:8080', 'http://127.0.0.1.relay.example', 'http://localhost.relay.example'] as $bad) {
            try {
                new Client(gatewayUrl: $bad, apiKey: 'svc_abc');
                $this->fail("accepted $bad");
            } catch (ConfigurationException $e) {
                $this->assertSame('configuration_error', $e->errorCode);
            }
        }
    }

    public function testKeyFileReadableByOthersIsRefused(): void
    {
        $f = tempnam(sys_get_temp_dir(), 'pr-php-key');
        file_put_contents($f, "svc_abcdefgh\n");
        foreach ([0644, 0640, 0604, 0660] as $mode) {
            chmod($f, $mode);
            try {
                new Client(gatewayUrl: 'https://relay.example', apiKeyFile: $f);
                $this->fail(sprintf('accepted a %03o key file', $mode));
            } catch (ConfigurationException $e) {
                $this->assertSame('configuration_error', $e->errorCode);
                $this->assertStringContainsString(sprintf('(mode %03o)', $mode), $e->getMessage());
                $this->assertStringContainsString('chmod 600', $e->getMessage());
                $this->assertStringNotContainsString('svc_abcdefgh', $e->getMessage(), 'the key is never in a message');
            }
        }
        chmod($f, 0600);
        $this->assertSame('svc_abcdefgh', Device::readGatewayKeyFile($f));
        file_put_contents($f, "sk-not-a-gateway-key\n");
        $this->expectException(ConfigurationException::class);
        Device::readGatewayKeyFile($f);
    }

    public function testMissingLibraryAtConstruction(): void
    {
        $this->expectException(EngineUnavailableException::class);
        new Client(gatewayUrl: 'https://relay.example', apiKey: 'svc_abc', library: '/nonexistent/libprivacy_relay.so');
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    private static function feed(SseDetokeniser $sse, string $all, int $piece): array
    {
        $out = [];
        foreach (str_split($all, $piece) as $p) {
            array_push($out, ...$sse->push($p));
        }
        array_push($out, ...$sse->finish());
        return $out;
    }

    public function testSseCutAcrossBytesFramesAndMidAlias(): void
    {
        $map = ['<EMAIL_1_abcd>' => 'jane@example.com'];
        $frames = '';
        foreach (['Mail <EM', 'AIL_1_', 'abcd> now'] as $i => $t) {
            $frames .= 'data: ' . json_encode(['id' => 'c', 'choices' => [['index' => 0, 'delta' => ['content' => $t], 'finish_reason' => null]]]) . "\n\n";
        }
        $frames .= "data: [DONE]\n\nevent: receipt-v2\ndata: {\"v\":2}\n\n";
        foreach ([1, 3, 7, 1000] as $piece) {
            $sse = new SseDetokeniser('chat.completions', $map);
            $text = '';
            foreach (self::feed($sse, $frames, $piece) as [, $data, $v]) {
                $text .= is_array($v) ? ($v['choices'][0]['delta']['content'] ?? '') : '';
            }
            $this->assertSame('Mail jane@example.com now', $text, "piece $piece");
            $this->assertTrue($sse->completed);
            $this->assertSame(['v' => 2], $sse->receipt);
        }
        // a stream cut mid-alias: what was held back comes out as it came, and the stream is incomplete
        $sse = new SseDetokeniser('chat.completions', $map);
        $cut = 'data: ' . json_encode(['id' => 'c', 'choices' => [['index' => 0, 'delta' => ['content' => 'Mail <EMAIL_1'], 'finish_reason' => null]]]) . "\n\n";
        $text = '';
        foreach (self::feed($sse, $cut, 5) as [, , $v]) {
            $text .= $v['choices'][0]['delta']['content'] ?? '';
        }
        $this->assertSame('Mail <EMAIL_1', $text);
        $this->assertFalse($sse->completed);
    }

    public function testResponsesStreamReleasesHeldBackTextBeforeDoneAndRenumbers(): void
    {
        $map = ['<EMAIL_1_abcd>' => 'jane@example.com'];
        $ev = static fn (string $type, array $v) => "event: $type\ndata: " . json_encode(['type' => $type] + $v) . "\n\n";
        $ids = ['item_id' => 'msg_1', 'output_index' => 0, 'content_index' => 0];
        $all = $ev('response.output_text.delta', ['sequence_number' => 1, 'delta' => 'Mail <EMAIL_1'] + $ids)
            . $ev('response.output_text.done', ['sequence_number' => 2, 'text' => 'Mail <EMAIL_1'] + $ids)
            . $ev('response.completed', ['sequence_number' => 3, 'response' => ['output' => [['content' => [['text' => 'to <EMAIL_1_abcd>']]]]]])
            . "event: receipt-v2\ndata: {\"v\":2}\n\n";
        $sse = new SseDetokeniser('responses', $map);
        $events = array_values(array_filter(array_map(static fn ($e) => $e[2], self::feed($sse, $all, 4)), 'is_array'));
        $this->assertSame([1, 2, 3, 4], array_column(array_slice($events, 0, 4), 'sequence_number'));
        $this->assertSame('Mail ', $events[0]['delta']);
        $this->assertSame('<EMAIL_1', $events[1]['delta'], 'an unfinished alias is released before .done, as it came');
        $this->assertSame('to jane@example.com', $events[3]['response']['output'][0]['content'][0]['text']);
        $this->assertTrue($sse->completed);
        $this->assertSame(['v' => 2], $sse->receipt);
    }

    public function testWebhookDeduper(): void
    {
        $t = 0.0;
        $d = new \PrivacyRelay\WebhookDeduper(10.0, function () use (&$t): float {
            return $t;
        });
        $this->assertFalse($d->seen('evt_1'));
        $this->assertTrue($d->seen('evt_1'), 'a redelivery');
        $t = 11.0;
        $this->assertFalse($d->seen('evt_1'), 'forgotten after the ttl');
        $this->assertSame(1, $d->size());
        $this->assertSame('e2', \PrivacyRelay\WebhookDeduper::eventIdOf('{"event_id":"e1"}', ['X-Service-Webhook-Event-Id' => 'e2']));
        $this->assertSame('e1', \PrivacyRelay\WebhookDeduper::eventIdOf('{"event_id":"e1"}', []));
        $this->assertNull(\PrivacyRelay\WebhookDeduper::eventIdOf('nope', []));
    }

    public function testMalformedSse(): void
    {
        $sse = new SseDetokeniser('chat.completions', []);
        try {
            $sse->push("data: {not json\n\n");
            $this->fail('no exception');
        } catch (StreamException $e) {
            $this->assertSame('stream_error', $e->errorCode);
        }
        $sse = new SseDetokeniser('messages', []);
        $sse->push("event: x\ndata: {\"type\":\"ping\"}\n\ndata: {\"partial");
        $this->expectException(StreamException::class);
        $sse->finish();
    }

    public function testRetriesHonourRetryAfterWithTheSameHeaders(): void
    {
        $sleeps = [];
        $t = new class (2, 5.0, 0.5, 8.0, 60.0, function (float $s) use (&$sleeps) { $sleeps[] = $s; }) extends Transport {
            public array $seen = [];
            public array $answers = [];

            protected function once(string $method, string $url, array $headers, ?string $body, float $timeout): array
            {
                $this->seen[] = $headers;
                $a = array_shift($this->answers);
                if ($a instanceof \Throwable) {
                    throw $a;
                }
                $fp = fopen('php://memory', 'w+');
                fwrite($fp, $a);
                rewind($fp);
                return [200, [], $fp];
            }
        };
        $t->answers = [
            PrivacyRelayException::fromAnswer(429, ['retry-after' => '3', 'x-request-id' => 'r1'], '{"error":{"code":"rate_limited","message":"slow"}}'),
            PrivacyRelayException::fromAnswer(503, ['retry-after' => '1'], '{"error":{"code":"upstream","message":"x"}}'),
            '{"ok":true}',
        ];
        [$status, , $body] = $t->request('POST', 'http://127.0.0.1:1/x', ['idempotency-key' => 'k1']);
        $this->assertSame([200, '{"ok":true}'], [$status, $body]);
        $this->assertSame([3.0, 1.0], $sleeps);
        $this->assertSame(['k1', 'k1', 'k1'], array_column($t->seen, 'idempotency-key'));

        $e = PrivacyRelayException::fromAnswer(429, ['retry-after' => '120', 'x-request-id' => 'r2'], '{"error":{"code":"rate_limited","message":"m"}}');
        $this->assertInstanceOf(RateLimitException::class, $e);
        $this->assertSame([429, 'rate_limited', 'r2', 120.0], [$e->status, $e->errorCode, $e->requestId, $e->retryAfter]);
        $t->answers = [$e];
        $sleeps = [];
        try {
            $t->request('POST', 'http://127.0.0.1:1/x', []);
            $this->fail('no exception');
        } catch (RateLimitException $got) {
            $this->assertSame([], $sleeps, 'a Retry-After over the maximum is not waited');
        }
        $this->assertInstanceOf(ServerException::class, PrivacyRelayException::fromAnswer(502, [], 'not json'));
        $this->assertSame('http_502', PrivacyRelayException::fromAnswer(502, [], 'not json')->errorCode);
    }

    public function testATimeoutIsAConnectionErrorAfterTheRetries(): void
    {
        $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        $this->assertNotFalse($server, $errstr);
        $port = (int) substr(strrchr(stream_socket_get_name($server, false), ':'), 1);
        $sleeps = 0;
        $t = new Transport(retries: 1, timeout: 0.3, sleep: static function (float $s) use (&$sleeps): void {
            $sleeps++;
        });
        $start = microtime(true);
        try {
            $t->request('GET', "http://127.0.0.1:$port/", []); // accepted by the kernel, never answered
            $this->fail('no exception');
        } catch (ConnectionException $e) {
            $this->assertSame('connection_error', $e->errorCode);
        } finally {
            fclose($server);
        }
        $this->assertSame(1, $sleeps, 'one retry');
        $this->assertLessThan(5.0, microtime(true) - $start);
    }

    public function testConnectionRefusedIsTyped(): void
    {
        $t = new Transport(retries: 1, sleep: static function (float $s): void {
        });
        $this->expectException(ConnectionException::class);
        $t->request('GET', 'http://127.0.0.1:9/', []);
    }

    public function testTamperedReceiptAndWebhooks(): void
    {
        $v = json_decode((string) file_get_contents(dirname(__DIR__, 2) . '/vectors/receipts.json'), true);
        $valid = null;
        foreach ($v['cases'] as $c) {
            if ($c['expected']['valid'] === true && is_array($c['input']) && !isset($c['previous']) && !isset($c['attestation'])) {
                $valid = $c;
                break;
            }
        }
        $this->assertNotNull($valid, 'a valid receipt vector');
        $opts = ['now_seconds' => $valid['now_seconds']];
        $this->assertTrue(Native::verifyReceipt($valid['input'], $valid['jwks'] ?? $v['jwks'], $opts)['valid']);
        $tampered = $valid['input'];
        $path = isset($tampered['payload']) && is_array($tampered['payload']) ? 'payload' : null;
        if ($path !== null) {
            $k = array_key_first($tampered['payload']);
            $tampered['payload'][$k] = is_string($tampered['payload'][$k]) ? $tampered['payload'][$k] . 'x' : 12345;
        } else {
            $k = array_key_first($tampered);
            $tampered[$k] = is_string($tampered[$k]) ? $tampered[$k] . 'x' : 12345;
        }
        $this->assertFalse(Native::verifyReceipt($tampered, $valid['jwks'] ?? $v['jwks'], $opts)['valid']);

        // webhooks: a signed vector verifies at its time; the same delivery later is stale, another secret is wrong
        $w = json_decode((string) file_get_contents(dirname(__DIR__, 2) . '/vectors/webhooks.json'), true);
        $ok = null;
        foreach ($w['verify'] as $c) {
            if ($c['expected']['ok'] === true) {
                $ok = $c;
                break;
            }
        }
        $this->assertNotNull($ok);
        $good = Native::verifyWebhook($ok['body'], $ok['headers'], $ok['secret'], ['now_seconds' => $ok['now_seconds']]);
        $this->assertTrue($good['ok']);
        $stale = Native::verifyWebhook($ok['body'], $ok['headers'], $ok['secret'], ['now_seconds' => $ok['now_seconds'] + 100000]);
        $this->assertFalse($stale['ok']);
        $this->assertSame('stale_timestamp', $stale['code']);
        $wrong = Native::verifyWebhook($ok['body'], $ok['headers'], $ok['secret'] . 'x', ['now_seconds' => $ok['now_seconds']]);
        $this->assertFalse($wrong['ok']);
        $this->assertSame('bad_signature', $wrong['code']);
    }
}
