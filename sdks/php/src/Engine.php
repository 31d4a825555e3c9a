<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\ConfigurationException;

/**
 * The on-device half of a relay call, all in the shared engine (C ABI): tokenise the body, sign the v3 attestation
 * of the exact bytes sent, naming engine relay-php with the core build's sha256.
 */
final class Engine
{
    public const ROUTES = ['chat.completions', 'messages', 'messages.count_tokens', 'embeddings', 'responses'];
    /** "redact" is not offered: it needs an image redactor, which this SDK does not ship. */
    public const MEDIA_POLICIES = ['refuse', 'pass'];

    /** @var array{id:string,version:string,sha256:string} */
    public readonly array $identity;
    /** @var array<string,mixed>|null */
    private ?array $deviceKey;
    private ?string $aliasSecret = null;

    /** @var list<string> */
    private array $passthroughPaths;

    /**
     * mediaPolicy: "refuse" (default: an image, audio or file part is refused on the device, 415) or "pass" (sent as
     * it is; a remote URL naming somebody is still refused). passthroughPaths: JSON pointers ("*" for one segment) of
     * fields the egress policy does not name, sent untokenised. Both are declared in the attestation's passthrough claim.
     *
     * @param array<string,mixed>|null $deviceKey
     * @param list<string> $passthroughPaths
     */
    public function __construct(private string $names = 'builtin', ?array $deviceKey = null,
        private bool $stableEmbeddingAliases = true, private string $mediaPolicy = 'refuse', array $passthroughPaths = [])
    {
        self::checkMediaPolicy($mediaPolicy);
        $this->passthroughPaths = self::checkPassthroughPaths($passthroughPaths);
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
        $options = ['names' => $this->names, 'media_policy' => $this->mediaPolicy, 'passthrough_paths' => $this->passthroughPaths];
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
            'passthrough' => $t['passthrough'] ?? [],
        ], $this->deviceKey());
        $map = [];
        foreach ($t['map'] as [$alias, $original]) {
            $map[$alias] = $original;
        }
        return new Prepared($t['body_text'],
            ['x-service-engine' => $a['engine_header'], 'x-service-attestation' => $a['header']],
            $map, $t['body'], $t['detectors_fired'] ?? [], $t['passthrough'] ?? []);
    }

    private static function checkMediaPolicy(string $value): void
    {
        if (!in_array($value, self::MEDIA_POLICIES, true)) {
            throw new ConfigurationException('mediaPolicy must be "refuse" (default) or "pass", not ' . json_encode($value)
                . ' ("redact" needs an image redactor, which the PHP SDK does not have).', 0, 'configuration_error');
        }
    }

    /**
     * @param array<mixed> $value
     * @return list<string>
     */
    private static function checkPassthroughPaths(array $value): array
    {
        if (!array_is_list($value)) {
            throw new ConfigurationException('passthroughPaths must be a list of JSON pointers such as "/metadata_note" or "/messages/*/x_tag".', 0, 'configuration_error');
        }
        foreach ($value as $p) {
            if (!is_string($p)) {
                throw new ConfigurationException('passthroughPaths must be a list of JSON pointers such as "/metadata_note" or "/messages/*/x_tag".', 0, 'configuration_error');
            }
            if (!str_starts_with($p, '/')) {
                throw new ConfigurationException('passthroughPaths: ' . json_encode($p) . ' is not a JSON pointer (it starts with /, e.g. "/x_trace_note").', 0, 'configuration_error');
            }
        }
        return $value;
    }
}
