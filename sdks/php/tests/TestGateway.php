<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

/**
 * A real gateway (programs/gateway.ts, embedded storage in a temp DATA_DIR) and the fake provider
 * (programs/fake-provider.ts, streaming in 5-character pieces so aliases are cut across SSE frames), started as
 * child processes on ephemeral loopback ports and stopped by PID (as sdks/python/tests/gateway.py does).
 */
final class TestGateway
{
    private static ?self $instance = null;
    public string $url;
    public string $providerUrl;
    public string $dataDir;
    /** @var list<resource> */
    private array $procs = [];
    private int $keys = 0;

    public static function repo(): string
    {
        return dirname(__DIR__, 3);
    }

    public static function get(): self
    {
        if (self::$instance === null) {
            self::$instance = new self();
            register_shutdown_function(static fn () => self::$instance?->stop());
        }
        return self::$instance;
    }

    private function __construct()
    {
        $node = self::repo() . '/node_modules/.bin/node';
        if (!is_executable($node)) {
            throw new \RuntimeException("$node is missing: run npm ci at the repository root");
        }
        $this->dataDir = sys_get_temp_dir() . '/pr-php-sdk-' . bin2hex(random_bytes(4));
        mkdir($this->dataDir, 0700);
        $base = getenv();
        unset($base['DATABASE_URL'], $base['REDIS_URL']);
        $line = $this->spawn([$node, 'programs/fake-provider.ts', '--host', '127.0.0.1', '--port', '0', '--stream-piece-chars', '5'],
            $base, 'fake provider listening', 30);
        $this->providerUrl = $line['url'];
        $env = $base + ['DATA_DIR' => $this->dataDir, 'PORT' => '0', 'HOST' => '127.0.0.1', 'LOCAL_PROVIDER_URL' => $this->providerUrl,
            'PAYMENTS_PROVIDER' => 'dev', 'WEBHOOK_ALLOW_LOOPBACK' => '1', 'TRUSTED_PROXIES' => '127.0.0.1', 'LOG_LEVEL' => 'info'];
        try {
            $line = $this->spawn([$node, 'programs/gateway.ts'], $env, 'gateway listening', 150);
        } catch (\Throwable $e) {
            $this->stop();
            throw $e;
        }
        $this->url = str_replace('0.0.0.0', '127.0.0.1', $line['annotations']['url']);
    }

    /**
     * Starts a process whose output goes to a log file (never a pipe nobody reads, which would block a chatty
     * gateway); answers the first JSON log line holding $needle.
     */
    private function spawn(array $cmd, array $env, string $needle, int $timeout): array
    {
        $log = $this->dataDir . '/' . basename($cmd[1]) . '.log';
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes, self::repo(), $env);
        if ($proc === false) {
            throw new \RuntimeException('cannot start ' . implode(' ', $cmd));
        }
        $this->procs[] = $proc;
        $deadline = microtime(true) + $timeout;
        while (microtime(true) < $deadline) {
            $text = (string) @file_get_contents($log);
            foreach (explode("\n", $text) as $l) {
                if (str_contains($l, $needle) && is_array($j = json_decode($l, true))) {
                    return $j;
                }
            }
            if (!proc_get_status($proc)['running']) {
                throw new \RuntimeException(implode(' ', $cmd) . " exited:\n$text");
            }
            usleep(100000);
        }
        throw new \RuntimeException("did not log \"$needle\" in $timeout s:\n" . @file_get_contents($log));
    }

    public function stop(): void
    {
        foreach (array_reverse($this->procs) as $proc) {
            $st = proc_get_status($proc);
            if ($st['running']) {
                posix_kill($st['pid'], 15);
                $until = microtime(true) + 10;
                while (proc_get_status($proc)['running'] && microtime(true) < $until) {
                    usleep(50000);
                }
                if (proc_get_status($proc)['running']) {
                    posix_kill($st['pid'], 9);
                }
            }
            proc_close($proc);
        }
        if ($this->procs !== [] && is_dir($this->dataDir)) {
            exec('rm -rf ' . escapeshellarg($this->dataDir));
        }
        $this->procs = [];
    }

    /** @return array{0:int,1:mixed} */
    public function http(string $method, string $url, mixed $body = null, array $headers = []): array
    {
        $lines = ['content-type: application/json', 'connection: close'];
        foreach ($headers as $k => $v) {
            $lines[] = "$k: $v";
        }
        $ctx = stream_context_create(['http' => ['method' => $method, 'header' => implode("\r\n", $lines),
            'content' => $body === null ? '' : json_encode($body), 'ignore_errors' => true, 'timeout' => 30]]);
        $text = file_get_contents($url, false, $ctx);
        $status = (int) (preg_match('#^HTTP/\S+ (\d+)#', $http_response_header[0] ?? '', $m) ? $m[1] : 0);
        return [$status, $text === '' || $text === false ? null : json_decode($text, true)];
    }

    /** @return list<array<string,mixed>> what the fake provider received */
    public function received(): array
    {
        return $this->http('GET', "{$this->providerUrl}/_fake/received")[1]['requests'];
    }

    public function resetProvider(): void
    {
        $this->http('POST', "{$this->providerUrl}/_fake/reset", new \stdClass());
    }

    public function admin(string $path, array $body): array
    {
        $token = trim((string) file_get_contents("{$this->dataDir}/admin-token"));
        [$status, $json] = $this->http('POST', "{$this->url}$path", $body, ['authorization' => "Bearer $token"]);
        if ($status >= 300) {
            throw new \RuntimeException("admin $path: $status " . json_encode($json));
        }
        return $json ?? [];
    }

    /** A portal token (spt_...) for the organisation of $keyPrefix with these abilities. */
    public function portalToken(string $keyPrefix, array $abilities): string
    {
        return $this->admin('/api/admin/portal-tokens', ['key_prefix' => $keyPrefix, 'abilities' => implode(',', $abilities)])['token'];
    }

    /** A self-service key whose wallet holds $usd: [apiKey, keyPrefix]. */
    public function fundedKey(string $usd = '10'): array
    {
        $this->keys++;
        $ip = '198.18.' . intdiv($this->keys, 250) . '.' . ($this->keys % 250) . '';
        [$status, $key] = $this->http('POST', "{$this->url}/api/v1/self-service/key", new \stdClass(), ['x-forwarded-for' => $ip]);
        if ($status !== 201) {
            throw new \RuntimeException("self-service key: $status " . json_encode($key));
        }
        if ($usd !== '0') {
            $this->admin('/api/admin/wallets/credit', ['key_prefix' => $key['key_prefix'], 'usd' => $usd]);
        }
        return [$key['api_key'], $key['key_prefix']];
    }

    /**
     * A client of a new organisation (a funded self-service key) holding a portal token with these abilities, over
     * $transport (default the SDK's own, no retries): [client, keyPrefix].
     * @param list<string> $abilities
     * @return array{0:\PrivacyRelay\Client,1:string}
     */
    public function portalClient(array $abilities, ?\PrivacyRelay\Transport $transport = null): array
    {
        [$apiKey, $prefix] = $this->fundedKey();
        return [new \PrivacyRelay\Client(gatewayUrl: $this->url, apiKey: $apiKey, portalToken: $this->portalToken($prefix, $abilities),
            names: 'off', retries: 0, transport: $transport), $prefix];
    }

    /**
     * Asks $probe again until it answers something other than null (what the gateway does in the background, such as a
     * webhook delivery's outcome, is visible only by asking), at most $timeout seconds; answers that value.
     */
    public static function eventually(callable $probe, string $what, float $timeout = 30.0): mixed
    {
        $deadline = microtime(true) + $timeout;
        while (($value = $probe()) === null) {
            if (microtime(true) > $deadline) {
                throw new \RuntimeException("not within $timeout s: $what");
            }
            usleep(50000);
        }
        return $value;
    }

    /** A 0600 key file holding a funded key. */
    public function keyFile(): string
    {
        [$key] = $this->fundedKey();
        $f = sys_get_temp_dir() . '/pr-php-key-' . bin2hex(random_bytes(4));
        file_put_contents($f, "$key\n");
        chmod($f, 0600);
        return $f;
    }
}
