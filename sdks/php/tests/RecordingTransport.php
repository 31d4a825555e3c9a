<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PrivacyRelay\Exception\PrivacyRelayException;
use PrivacyRelay\Transport;

/**
 * The SDK's own Transport (real HTTP), keeping every exchange: method, path, the headers sent and the status
 * answered (an error status too), so an end-to-end test can assert what went on the wire and what the gateway said.
 */
final class RecordingTransport extends Transport
{
    /** @var list<array{method:string,path:string,headers:array<string,string>,status:int}> */
    public array $exchanges = [];

    public function __construct()
    {
        parent::__construct(retries: 0);
    }

    protected function once(string $method, string $url, array $headers, ?string $body, float $timeout): array
    {
        $path = (string) parse_url($url, PHP_URL_PATH);
        try {
            $answer = parent::once($method, $url, $headers, $body, $timeout);
        } catch (PrivacyRelayException $e) {
            $this->exchanges[] = ['method' => $method, 'path' => $path, 'headers' => $headers, 'status' => $e->status];
            throw $e;
        }
        $this->exchanges[] = ['method' => $method, 'path' => $path, 'headers' => $headers, 'status' => $answer[0]];
        return $answer;
    }

    /** @return array{method:string,path:string,headers:array<string,string>,status:int} the latest exchange */
    public function last(): array
    {
        return $this->exchanges[array_key_last($this->exchanges)];
    }
}
