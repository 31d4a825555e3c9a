<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\ConfigurationException;

/**
 * A gateway's receipt keys (JWKS) kept in a file, for verifying receipts offline later or elsewhere:
 *   JwksCache::save('/var/lib/app/relay.jwks', $client->jwks());
 *   Native::verifyReceipt($receipt, JwksCache::load('/var/lib/app/relay.jwks'));
 * The file holds public keys only (a key with a private part is refused both ways); written atomically (a reader
 * never sees half a file).
 */
final class JwksCache
{
    public static function save(string $path, array $jwks): void
    {
        self::check($jwks, $path);
        $tmp = $path . '.' . bin2hex(random_bytes(4)) . '.tmp';
        if (@file_put_contents($tmp, json_encode($jwks, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT) . "\n") === false || !@rename($tmp, $path)) {
            @unlink($tmp);
            throw new ConfigurationException("Cannot write the JWKS cache $path.", 0, 'configuration_error');
        }
    }

    /** The cached JWKS; null when the file does not exist yet. */
    public static function load(string $path): ?array
    {
        if (!is_file($path)) {
            return null;
        }
        $jwks = json_decode((string) @file_get_contents($path), true);
        self::check($jwks, $path);
        return $jwks;
    }

    private static function check(mixed $jwks, string $path): void
    {
        $keys = is_array($jwks) ? ($jwks['keys'] ?? null) : null;
        $ok = is_array($keys) && $keys !== [];
        foreach ($ok ? $keys : [] as $k) {
            $ok = $ok && is_array($k) && ($k['kty'] ?? null) === 'EC' && ($k['crv'] ?? null) === 'P-256' && is_string($k['kid'] ?? null)
                && !array_key_exists('d', $k);
        }
        if (!$ok) {
            throw new ConfigurationException("$path: not a JWKS of public P-256 receipt keys.", 0, 'invalid_jwks');
        }
    }
}
