<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;

/**
 * The README's quickstart exactly as written and every program in examples/, run as a user runs them (their own PHP
 * process, GATEWAY_URL and a 0600 key file in the environment) against the real gateway; the provider never sees
 * an original.
 */
final class ExamplesTest extends TestCase
{
    private const EMAIL = 'jane.doe@example.com';
    private TestGateway $relay;
    private string $dir;
    /** @var array<string,string> */
    private array $env;

    protected function setUp(): void
    {
        $this->relay = TestGateway::get();
        $this->relay->resetProvider();
        $this->dir = sys_get_temp_dir() . '/pr-php-example-' . bin2hex(random_bytes(3));
        mkdir($this->dir, 0700);
        [$key] = $this->relay->fundedKey();
        file_put_contents("$this->dir/gateway-key", "$key\n");
        chmod("$this->dir/gateway-key", 0600);
        $this->env = ['GATEWAY_URL' => $this->relay->url, 'PRIVACY_RELAY_KEY_FILE' => "$this->dir/gateway-key"];
    }

    protected function tearDown(): void
    {
        exec('rm -rf ' . escapeshellarg($this->dir));
    }

    /** @return array{0:int,1:string} exit code and output (stdout and stderr) of `php $file` */
    private function runProgram(string $file): array
    {
        $proc = proc_open([PHP_BINARY, $file], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes,
            $this->dir, $this->env + getenv());
        $this->assertIsResource($proc);
        $out = (string) stream_get_contents($pipes[1]);
        fclose($pipes[1]);
        return [proc_close($proc), $out];
    }

    private function assertNoOriginalUpstream(): void
    {
        $sent = json_encode($this->relay->received());
        $this->assertNotSame('[]', $sent, 'the provider was called');
        $this->assertStringNotContainsString(self::EMAIL, $sent);
    }

    public function testTheReadmeQuickstartRunsAsPasted(): void
    {
        $readme = (string) file_get_contents(dirname(__DIR__) . '/README.md');
        $this->assertSame(1, preg_match('/## Quickstart\n\n```php\n(.*?)```/s', $readme, $m), 'the README has a quickstart');
        $this->assertLessThanOrEqual(12, substr_count($m[1], "\n"), 'about ten lines');
        // pasted into a file next to the package's autoload.php, as its first line expects
        $file = dirname(__DIR__) . '/quickstart-' . bin2hex(random_bytes(4)) . '.php';
        file_put_contents($file, $m[1]);
        try {
            [$rc, $out] = $this->runProgram($file);
        } finally {
            unlink($file);
        }
        $this->assertSame(0, $rc, $out);
        $this->assertStringContainsString(self::EMAIL, $out, 'the original restored here');
        $this->assertStringContainsString('receipt verified: yes', $out);
        $this->assertNoOriginalUpstream();
    }

    public function testQuickstart(): void
    {
        [$rc, $out] = $this->runProgram(dirname(__DIR__) . '/examples/quickstart.php');
        $this->assertSame(0, $rc, $out);
        $this->assertSame(2, substr_count($out, self::EMAIL), 'restored in the answer and in the stream: ' . $out);
        $this->assertStringContainsString('receipt verified: yes', $out);
        $this->assertNoOriginalUpstream();
    }

    public function testStreaming(): void
    {
        [$rc, $out] = $this->runProgram(dirname(__DIR__) . '/examples/streaming.php');
        $this->assertSame(0, $rc, $out);
        $this->assertStringContainsString(self::EMAIL, $out);
        $this->assertStringNotContainsString('<EMAIL_', $out);
        $this->assertMatchesRegularExpression('/receipt [0-9a-f]{32} verified: yes/', $out);
        $this->assertNoOriginalUpstream();
    }

    public function testErrors(): void
    {
        [$rc, $out] = $this->runProgram(dirname(__DIR__) . '/examples/errors.php');
        $this->assertSame(0, $rc, $out);
        $this->assertStringContainsString('not a gateway URL (configuration_error)', $out);
        $this->assertStringContainsString('refused here (unsupported_field) at /internal_note', $out);
        $this->assertMatchesRegularExpression('/PrivacyRelay\\\\Exception\\\\\w+Exception: HTTP 4\d\d [a-z_]+, request \S+/', $out);
        foreach ($this->relay->received() as $r) {
            $this->assertStringNotContainsString(self::EMAIL, json_encode($r), 'the refused field never left');
        }
    }

    public function testWebhookReceiverVerifiesAGatewayDeliveryAndRefusesAForgedOne(): void
    {
        [$apiKey, $prefix] = $this->relay->fundedKey();
        $client = new Client(gatewayUrl: $this->relay->url, apiKey: $apiKey, portalToken: $this->relay->portalToken($prefix, ['webhooks.manage']));
        // a free loopback port for php -S (taken and released here, the server binds it right after)
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) explode(':', (string) stream_socket_get_name($probe, false))[1];
        fclose($probe);
        $endpoint = $client->rest->webhooks->endpoints->create("http://127.0.0.1:$port/hooks", ['webhook.test']);
        $log = "$this->dir/receiver.log";
        $proc = proc_open([PHP_BINARY, '-d', 'ffi.enable=1', '-S', "127.0.0.1:$port", dirname(__DIR__) . '/examples/webhook-receiver.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes, $this->dir,
            ['WEBHOOK_SECRET' => $endpoint['secret']] + getenv());
        $this->assertIsResource($proc);
        try {
            TestGateway::eventually(static fn () => @fsockopen('127.0.0.1', $port) ?: null, 'php -S listening', 30);
            $client->rest->webhooks->endpoints->test($endpoint['id']);
            $line = TestGateway::eventually(static fn () => preg_match('/webhook verified: webhook\.test (\S+)/', (string) file_get_contents($log), $m) ? $m[1] : null,
                'the delivery verified by the example', 60);
            $this->assertNotSame('', $line);
            [$status] = $this->relay->http('POST', "http://127.0.0.1:$port/hooks", ['event' => 'webhook.test'],
                ['x-service-signature' => 't=' . time() . ',v1=' . str_repeat('0', 64)]);
            $this->assertSame(400, $status, 'a forged delivery is refused');
            $this->assertStringContainsString('webhook refused: bad_signature', (string) file_get_contents($log));
        } finally {
            $pid = proc_get_status($proc)['pid'];
            posix_kill($pid, 15);
            proc_close($proc);
        }
    }

    /** A program added to examples/ fails here until a test of this file runs it. */
    public function testEveryExampleIsRunHere(): void
    {
        $source = (string) file_get_contents(__FILE__);
        foreach (glob(dirname(__DIR__) . '/examples/*.php') as $f) {
            $this->assertStringContainsString("'/examples/" . basename($f) . "'", $source, basename($f) . ' is not run');
        }
    }
}
