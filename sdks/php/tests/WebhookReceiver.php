<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

/**
 * tests/fixtures/webhook-receiver.php as a child process: one delivery accepted per status given (answered with
 * it), each read back as ['status' => ..., 'body' => raw body, 'headers' => lowercase names]. Stopped by its PID.
 */
final class WebhookReceiver
{
    public readonly int $port;
    /** @var resource */
    private $proc;
    /** @var array<int,resource> */
    private array $pipes = [];

    /** @param list<int> $statuses */
    public function __construct(array $statuses = [200])
    {
        $proc = proc_open([PHP_BINARY, __DIR__ . '/fixtures/webhook-receiver.php', ...array_map('strval', $statuses)],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $this->pipes);
        if ($proc === false) {
            throw new \RuntimeException('cannot start the webhook receiver');
        }
        $this->proc = $proc;
        $this->port = (int) trim((string) fgets($this->pipes[1]));
        if ($this->port <= 0) {
            $why = stream_get_contents($this->pipes[2]);
            $this->stop();
            throw new \RuntimeException("the webhook receiver did not start: $why");
        }
    }

    public function url(string $path = '/hooks'): string
    {
        return "http://127.0.0.1:{$this->port}$path";
    }

    /** The next delivery, waiting up to $timeout seconds for the gateway to make it. */
    public function next(int $timeout = 60): array
    {
        stream_set_timeout($this->pipes[1], $timeout);
        $got = json_decode((string) fgets($this->pipes[1]), true);
        if (!is_array($got)) {
            throw new \RuntimeException("no delivery reached the receiver in $timeout s: " . stream_get_contents($this->pipes[2]));
        }
        return $got;
    }

    public function stop(): void
    {
        foreach ($this->pipes as $p) {
            if (is_resource($p)) {
                fclose($p);
            }
        }
        $this->pipes = [];
        if (is_resource($this->proc)) {
            proc_terminate($this->proc);
            proc_close($this->proc);
        }
    }

    public function __destruct()
    {
        $this->stop();
    }
}
