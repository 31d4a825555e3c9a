<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\StreamException;

/**
 * A streamed answer: foreach over it yields the provider's chunks (chat) or events (messages) as arrays, originals
 * restored as they arrive. The request is made when iteration starts; afterwards receipt, receiptVerified and
 * receiptVerification describe the receipt-v2 trailer. A stream can be iterated once.
 *
 * @implements \IteratorAggregate<int,array<string,mixed>>
 */
final class Stream implements \IteratorAggregate
{
    public ?string $requestId = null;
    public ?array $receipt = null;
    public ?bool $receiptVerified = null;
    public ?array $receiptVerification = null;
    private bool $used = false;

    /** @param \Closure():array{0:int,1:array<string,string>,2:resource} $open */
    public function __construct(private Client $client, private string $route, private Prepared $prepared,
        private \Closure $open, private int $readBytes = 8192)
    {
    }

    public function tokenisedRequest(): array
    {
        return $this->prepared->tokenisedBody;
    }

    /** @return \Generator<int,array<string,mixed>> */
    public function getIterator(): \Generator
    {
        if ($this->used) {
            throw new StreamException('A stream can be iterated once.', 0, 'stream_error');
        }
        $this->used = true;
        $sse = new SseDetokeniser($this->route, $this->prepared->map);
        [$status, $headers, $fp] = ($this->open)();
        $this->requestId = $headers['x-request-id'] ?? null;
        try {
            while (!feof($fp)) {
                $bytes = fread($fp, $this->readBytes);
                if ($bytes === false) {
                    throw new StreamException('The stream broke while reading.', $status, 'stream_error', $this->requestId);
                }
                if ($bytes === '') {
                    if (stream_get_meta_data($fp)['timed_out'] ?? false) {
                        throw new StreamException('The stream timed out.', $status, 'stream_error', $this->requestId);
                    }
                    continue;
                }
                foreach ($sse->push($bytes) as $e) {
                    if (self::shown($e)) {
                        yield $e[2];
                    }
                }
            }
            foreach ($sse->finish() as $e) {
                if (self::shown($e)) {
                    yield $e[2];
                }
            }
        } finally {
            fclose($fp);
            $sse->close();
        }
        if (!$sse->completed) {
            throw new StreamException('The stream ended before its end marker (the upstream cut it); the answer is incomplete.',
                $status, 'stream_error', $this->requestId);
        }
        $this->receipt = $sse->receipt;
        [$this->receiptVerified, $this->receiptVerification] = $this->client->verify($this->receipt);
    }

    /** @param array{0:?string,1:string,2:mixed} $e */
    private static function shown(array $e): bool
    {
        return $e[0] !== 'receipt-v2' && $e[1] !== '[DONE]' && is_array($e[2]);
    }
}
