<?php

declare(strict_types=1);

namespace PrivacyRelay;

/**
 * A provider-shaped answer, originals restored: read it as an array ($r['choices'][0]['message']['content']) or
 * as $r->data; with the relay's metadata (requestId, receipt, receiptVerified, receiptVerification,
 * countersignature, tokenisedRequest: what was sent, passthrough: what the opt-ins let through untokenised,
 * [['path' => ..., 'kind' => 'image'|'field'...]], as declared in the attestation).
 *
 * @implements \ArrayAccess<string,mixed>
 */
final class Response implements \ArrayAccess, \JsonSerializable
{
    /** @param array<string,mixed> $data */
    public function __construct(
        public readonly array $data,
        public readonly ?string $requestId = null,
        public readonly ?array $receipt = null,
        public readonly ?bool $receiptVerified = null,
        public readonly ?array $receiptVerification = null,
        public readonly ?array $countersignature = null,
        public readonly ?array $tokenisedRequest = null,
        public readonly array $passthrough = [],
    ) {
    }

    public function offsetExists(mixed $offset): bool
    {
        return isset($this->data[$offset]);
    }

    public function offsetGet(mixed $offset): mixed
    {
        return $this->data[$offset] ?? null;
    }

    public function offsetSet(mixed $offset, mixed $value): void
    {
        throw new \LogicException('A Response is read-only.');
    }

    public function offsetUnset(mixed $offset): void
    {
        throw new \LogicException('A Response is read-only.');
    }

    public function jsonSerialize(): mixed
    {
        return $this->data;
    }
}
