<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\ConfigurationException;

/** Device files (attester key, stable-alias secret, gateway key file) and the gateway URL rules. */
final class Device
{
    public const GATEWAY_KEY = '/^svc_[a-z2-7]+$/';

    private static function err(string $m): ConfigurationException
    {
        return new ConfigurationException($m, 0, 'configuration_error');
    }

    public static function expandHome(string $path, string $setting): string
    {
        $home = getenv('HOME') ?: '/';
        if ($path === '~' || str_starts_with($path, '~/')) {
            return $path === '~' ? $home : $home . substr($path, 1);
        }
        if (str_starts_with($path, '~')) {
            throw self::err("$setting $path: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path.");
        }
        return $path;
    }

    public static function configDir(): string
    {
        $dir = getenv('PRIVACY_RELAY_CONFIG_DIR');
        if (is_string($dir) && $dir !== '') {
            return self::expandHome($dir, 'PRIVACY_RELAY_CONFIG_DIR');
        }
        $xdg = getenv('XDG_CONFIG_HOME');
        if (is_string($xdg) && $xdg !== '') {
            return self::expandHome($xdg, 'XDG_CONFIG_HOME') . '/privacy-relay';
        }
        return (getenv('HOME') ?: '/') . '/.config/privacy-relay';
    }

    public static function assertPrivateFile(string $path, string $what): void
    {
        clearstatcache(true, $path);
        if (!file_exists($path)) {
            throw self::err("$what $path does not exist.");
        }
        if (!is_file($path)) {
            throw self::err("$what $path is not a regular file.");
        }
        $mode = fileperms($path) & 0777;
        if (($mode & 0077) !== 0) {
            throw self::err(sprintf('%s %s is readable by other users (mode %03o); refusing to use it. Fix: chmod 600 %s',
                $what, $path, $mode, $path));
        }
    }

    private static function createExclusive(string $path, string $content): void
    {
        $dir = dirname($path);
        if (!is_dir($dir)) {
            @mkdir($dir, 0700, true);
        }
        $old = umask(0077);
        try {
            $f = @fopen($path, 'x');
            if ($f !== false) {
                fwrite($f, $content);
                fclose($f);
                chmod($path, 0600);
            }
        } finally {
            umask($old);
        }
    }

    /** @return array<string,mixed> the device's P-256 private JWK (created on first use, mode 0600). */
    public static function loadOrCreateDeviceKey(): array
    {
        $path = self::configDir() . '/attester-key.json';
        if (!file_exists($path)) {
            self::createExclusive($path, json_encode(Native::generateDeviceKey()['private_jwk']) . "\n");
        }
        self::assertPrivateFile($path, 'Device attester key file');
        $key = json_decode((string) file_get_contents($path), true);
        if (!is_array($key)) {
            throw self::err("Device attester key file $path is not a P-256 private JWK; move it away to generate a new key.");
        }
        return $key;
    }

    /** The 32-byte stable-alias secret (created on first use, mode 0600). */
    public static function loadOrCreateAliasSecret(): string
    {
        $path = self::configDir() . '/alias-secret';
        if (!file_exists($path)) {
            self::createExclusive($path, rtrim(strtr(base64_encode(random_bytes(32)), '+/', '-_'), '=') . "\n");
        }
        self::assertPrivateFile($path, 'Stable-alias secret file');
        $secret = base64_decode(strtr(trim((string) file_get_contents($path)), '-_', '+/'), true);
        if ($secret === false || strlen($secret) < 32) {
            throw self::err("Stable-alias secret file $path does not hold 32 base64url bytes; move it away to generate a new one.");
        }
        return $secret;
    }

    public static function readGatewayKeyFile(string $path): string
    {
        $p = self::expandHome($path, 'apiKeyFile');
        self::assertPrivateFile($p, 'Gateway key file');
        $key = trim((string) file_get_contents($p));
        if (!preg_match(self::GATEWAY_KEY, $key)) {
            throw self::err("Gateway key file $p does not hold a gateway key (expected one line starting with svc_).");
        }
        return $key;
    }

    public static function isLoopback(string $host): bool
    {
        $h = strtolower(trim($host, '[]'));
        if ($h === 'localhost' || str_ends_with($h, '.localhost') || $h === '::1') {
            return true;
        }
        return filter_var($h, FILTER_VALIDATE_IP, FILTER_FLAG_IPV4) !== false && str_starts_with($h, '127.');
    }

    /** The gateway base URL: https, or http to a loopback host only; no credentials, query or fragment. */
    public static function parseGatewayUrl(?string $raw): string
    {
        if ($raw === null || trim($raw) === '') {
            throw self::err('gatewayUrl is not set: give the base URL of your Privacy Relay gateway (https://...).');
        }
        $u = parse_url(trim($raw));
        if ($u === false || !in_array($u['scheme'] ?? '', ['http', 'https'], true) || ($u['host'] ?? '') === '') {
            throw self::err("gatewayUrl must be an https URL, not \"$raw\".");
        }
        if (isset($u['user']) || isset($u['pass'])) {
            throw self::err('gatewayUrl must not carry credentials; give the key as apiKey or apiKeyFile.');
        }
        if (isset($u['query']) || isset($u['fragment'])) {
            throw self::err('gatewayUrl must not have a query or fragment.');
        }
        if ($u['scheme'] === 'http' && !self::isLoopback($u['host'])) {
            throw self::err("gatewayUrl $raw is plain http to a non-loopback host; a gateway must be reached over https "
                . '(plain http is allowed only to 127.0.0.1/localhost for development).');
        }
        $port = isset($u['port']) ? ':' . $u['port'] : '';
        return $u['scheme'] . '://' . $u['host'] . $port . rtrim($u['path'] ?? '', '/');
    }
}
