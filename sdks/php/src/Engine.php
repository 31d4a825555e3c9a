<?php

declare(strict_types=1);

namespace PrivacyRelay;

/**
 * The on-device half of a relay call, all in the shared engine (C ABI): tokenise the body, sign the v3 attestation
 * of the exact bytes sent, naming engine relay-php with the core build's sha256.
 */
final class Engine
{
    public const ROUTES = ['chat.completions', 'messages', 'messages.count_tokens', 'embeddings', 'responses'];

    /** @var array{id:string,version:string,sha256:string} */
    public readonly array $identity;
    /** @var array<string,mixed>|null */
    private ?array $deviceKey;
    private ?string $aliasSecret = null;

    /** @param array<string,mixed>|null $deviceKey */
    public function __construct(private string $names = 'builtin', ?array $deviceKey = null,
        private bool $stableEmbeddingAliases = true)
    {
        $info = Native::engineInfo(); // loads the library: EngineUnavailableException here, at construction
        $this->identity = ['id' => Version::ENGINE_ID, 'version' => Version::VERSION, 'sha256' => (string) $info['sha256']];
        $this->deviceKey = $deviceKey;
    }

    /** @return array<string,mixed> */
    public function deviceKey(): array
    {
        return $this->deviceKey ??= Device::loadOrCreateDeviceKey();
    }

    private function aliasSecretHex(): string
    {
        return bin2hex($this->aliasSecret ??= Device::loadOrCreateAliasSecret());
    }

    /** @param array<string,mixed> $body */
    public function prepare(string $route, array $body, ?string $idempotencyKey = null): Prepared
    {
        if (!in_array($route, self::ROUTES, true)) {
            throw new \InvalidArgumentException('route must be one of ' . implode(', ', self::ROUTES));
        }
        $options = ['names' => $this->names];
        if ($route === 'embeddings' && $this->stableEmbeddingAliases) {
            $options['stable_alias_secret_hex'] = $this->aliasSecretHex();
        }
        if ($idempotencyKey !== null && $this->stableEmbeddingAliases) {
            $options['device_alias_secret_hex'] = $this->aliasSecretHex();
            $options['idempotency_key'] = $idempotencyKey;
        }
        $t = Native::tokeniseRequest($route, $body, $options);
        $a = Native::buildAttestation([
            'route' => $route, 'body' => $t['body_text'], 'body_is_canonical' => true,
            'detectors_fired' => (object) ($t['detectors_fired'] ?? []), 'engine' => $this->identity,
        ], $this->deviceKey());
        $map = [];
        foreach ($t['map'] as [$alias, $original]) {
            $map[$alias] = $original;
        }
        return new Prepared($t['body_text'],
            ['x-service-engine' => $a['engine_header'], 'x-service-attestation' => $a['header']],
            $map, $t['body'], $t['detectors_fired'] ?? []);
    }
}
