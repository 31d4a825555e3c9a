<?php

declare(strict_types=1);

namespace PrivacyRelay;

/** $client->rest->keys: the organisation's gateway keys (portal token). A created or rotated key is shown once. */
final class RestKeys extends RestSection
{
    /** @param list<string>|null $permissions @param list<string>|null $models */
    public function create(?string $name = null, ?array $permissions = null, ?array $models = null, ?int $rotationDays = null,
        ?string $orgId = null, array $options = []): array
    {
        $body = array_filter(['name' => $name, 'permissions' => $permissions, 'models' => $models,
            'rotation_days' => $rotationDays, 'org_id' => $orgId], static fn ($v) => $v !== null);
        return $this->client->call('POST', '/api/keys', 'portal', (object) $body, $options);
    }

    public function list(?string $orgId = null, array $options = []): array
    {
        return $this->client->call('GET', '/api/v1/keys' . self::query(['org_id' => $orgId]), 'portal', null, $options);
    }

    public function update(string $keyId, array $changes, array $options = []): array
    {
        return $this->client->call('PATCH', '/api/keys/' . self::id($keyId), 'portal', (object) $changes, $options);
    }

    public function rotate(string $keyId, array $options = []): array
    {
        return $this->client->call('POST', '/api/keys/' . self::id($keyId) . '/rotate', 'portal', null, $options);
    }

    public function revoke(string $keyId, array $options = []): array
    {
        return $this->client->call('POST', '/api/keys/' . self::id($keyId) . '/revoke', 'portal', null, $options);
    }

    /** A key's permissions and model allowlist as the portal lists them (null for an id it does not list). */
    public function scopes(string $keyId, array $options = []): ?array
    {
        foreach ($this->list(null, $options)['keys'] ?? [] as $k) {
            if (($k['id'] ?? null) === $keyId) {
                return ['permissions' => $k['permissions'] ?? null, 'models' => $k['models'] ?? null];
            }
        }
        return null;
    }
}
