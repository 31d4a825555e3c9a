<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\EngineException;
use PrivacyRelay\Exception\EngineUnavailableException;
use PrivacyRelay\Exception\InvalidRequestException;
use PrivacyRelay\Exception\UnsupportedContentException;

/**
 * The binding of the shared engine's C ABI (sdks/rust/ffi/include/privacy_relay.h) through PHP's built-in FFI
 * extension. JSON in and out; every string the library returns is freed here with pr_string_free; an error return
 * becomes an exception (EngineException; InvalidRequestException for invalid_request / unsupported_field;
 * UnsupportedContentException (415) for unsupported_content).
 *
 * Where the library is found, first match wins:
 *   1. the path given to Native::load($path) (the Client's `library` option);
 *   2. getenv('PRIVACY_RELAY_LIB');
 *   3. the package's native/ folder (a copy put next to src/ by whoever ships the package);
 *   4. a source checkout's build, sdks/rust/target/release (what sdks/php/ci.sh builds with cargo).
 */
final class Native
{
    public const ABI_VERSION = 1;
    private const LIB_NAMES = ['libprivacy_relay.so', 'libprivacy_relay.dylib', 'privacy_relay.dll'];

    // The header's declarations (the uint8_t* data of pr_verify_webhook, pr_hash and pr_alias_tag declared as char*: same ABI,
    // lets PHP pass a string with its length).
    private static ?\FFI $ffi = null;
    private static ?string $path = null;

    /** @return list<string> */
    public static function candidates(): array
    {
        $dirs = [dirname(__DIR__) . '/native', dirname(__DIR__, 2) . '/rust/target/release'];
        $out = [];
        foreach ($dirs as $d) {
            foreach (self::LIB_NAMES as $n) {
                $out[] = "$d/$n";
            }
        }
        return $out;
    }

    public static function path(): ?string
    {
        return self::$path;
    }

    /** Forgets the loaded library (tests). */
    public static function reset(): void
    {
        self::$ffi = null;
        self::$path = null;
    }

    /** Loads the library once; EngineUnavailableException names what is wrong and how to fix it. */
    public static function load(?string $path = null): \FFI
    {
        if (self::$ffi !== null && ($path === null || $path === self::$path)) {
            return self::$ffi;
        }
        if (!extension_loaded('FFI') || !class_exists(\FFI::class)) {
            throw self::unavailable('PHP\'s FFI extension is not loaded; the SDK binds the engine library through it. '
                . 'Install a PHP built with FFI (Debian\'s php-cli has it) and enable extension=ffi.');
        }
        $enable = strtolower((string) ini_get('ffi.enable'));
        if (!in_array($enable, ['1', 'on', 'true', 'yes'], true) && !($enable === 'preload' && PHP_SAPI === 'cli')) {
            throw self::unavailable("PHP's FFI is disabled here (ffi.enable=$enable, SAPI " . PHP_SAPI . '). Set ffi.enable=1 '
                . '(php.ini or php -d ffi.enable=1); the default "preload" allows FFI only on the command line.');
        }
        $from = 'the library option';
        if ($path === null || $path === '') {
            $env = getenv('PRIVACY_RELAY_LIB');
            if (is_string($env) && $env !== '') {
                $path = $env;
                $from = 'PRIVACY_RELAY_LIB';
            } else {
                foreach (self::candidates() as $c) {
                    if (is_file($c)) {
                        $path = $c;
                        break;
                    }
                }
                if ($path === null || $path === '') {
                    $dirs = implode(', ', array_unique(array_map('dirname', self::candidates())));
                    throw self::unavailable('the Privacy Relay engine library (libprivacy_relay) was not found. Set '
                        . 'PRIVACY_RELAY_LIB to its path, or build it: cd sdks/rust && cargo build --release -p '
                        . "privacy-relay-ffi (looked in $dirs)");
                }
            }
        }
        if (!is_file($path)) {
            throw self::unavailable("$from $path is not a file; point it at libprivacy_relay.so (sdks/rust/target/release).");
        }
        try {
            $ffi = \FFI::cdef(self::declarations($path), $path);
        } catch (\FFI\Exception $e) {
            throw self::unavailable("the engine library $path cannot be loaded or is not the Privacy Relay engine "
                . '(an older build?): ' . $e->getMessage());
        }
        $abi = $ffi->pr_abi_version();
        if ($abi !== self::ABI_VERSION) {
            throw self::unavailable("the engine library $path has ABI version $abi; this SDK (" . Version::VERSION
                . ') needs ' . self::ABI_VERSION . '. Use the library built from the same release.');
        }
        self::$path = $path;
        return self::$ffi = $ffi;
    }

    private static function unavailable(string $message): EngineUnavailableException
    {
        return new EngineUnavailableException($message, 0, 'engine_unavailable');
    }

    // --- the calls ---------------------------------------------------------------------------------------------

    /** @return array<string,mixed> */
    public static function engineInfo(): array
    {
        return self::jsonCall('pr_engine_info');
    }

    /** @return array<string,mixed> */
    public static function tokeniseRequest(string $route, mixed $body, mixed $options = null): array
    {
        return self::jsonCall('pr_tokenise_request', $route, self::jsonText($body), self::jsonText($options));
    }

    /** @return array<string,mixed> */
    public static function tokeniseText(?string $text, mixed $options = null): array
    {
        return self::jsonCall('pr_tokenise_text', self::cstr($text), self::jsonText($options));
    }

    /** @return array<string,mixed> */
    public static function detectSpans(?string $text, mixed $options = null): array
    {
        return self::jsonCall('pr_detect_spans', self::cstr($text), self::jsonText($options));
    }

    public static function detokenise(?string $text, mixed $map): string
    {
        return self::call('pr_detokenise', self::cstr($text), self::jsonText($map));
    }

    public static function canonicalize(?string $jsonText): string
    {
        return self::call('pr_canonicalize', self::cstr($jsonText));
    }

    /** @return array<string,mixed> */
    public static function generateDeviceKey(): array
    {
        return self::jsonCall('pr_generate_device_key');
    }

    /** @return array<string,mixed> */
    public static function verifyReceipt(mixed $receipt, mixed $jwks, mixed $options = null): array
    {
        if ($receipt !== null && !is_string($receipt)) {
            $receipt = self::jsonText($receipt);
        }
        return self::jsonCall('pr_verify_receipt', self::cstr($receipt), self::jsonText($jwks), self::jsonText($options));
    }

    /** @return array<string,mixed> */
    public static function verifyChain(mixed $receipts, mixed $jwks, mixed $options = null): array
    {
        return self::jsonCall('pr_verify_chain', self::jsonText($receipts), self::jsonText($jwks), self::jsonText($options));
    }

    /**
     * @param array<string,string> $headers
     * @return array<string,mixed>
     */
    public static function verifyWebhook(?string $body, array|object $headers, ?string $secret, mixed $options = null): array
    {
        return self::jsonCall('pr_verify_webhook', $body, $body === null ? 0 : strlen($body),
            self::jsonText((object) $headers), self::cstr($secret), self::jsonText($options));
    }

    /**
     * The C declarations, read from the engine's one header (sdks/rust/ffi/include/privacy_relay.h) so they have a
     * single copy: next to the library, in the package's native/, or in a source checkout. FFI::cdef takes no
     * preprocessor, so its directives and the C++ extern "C" wrapper are dropped, byte buffers read as char * (the #define'd codes are mirrored
     * as PHP constants where used).
     */
    private static function declarations(string $library): string
    {
        foreach ([dirname($library) . '/privacy_relay.h', dirname(__DIR__) . '/native/privacy_relay.h',
            dirname(__DIR__, 2) . '/rust/ffi/include/privacy_relay.h'] as $header) {
            if (is_file($header)) {
                // const uint8_t * (byte buffers) as const char *: the same ABI, and PHP FFI passes a string only to char *
                return str_replace('const uint8_t *', 'const char *',
                    (string) preg_replace(['/^\s*#.*$/m', '/^extern "C" \{$/m', '/^\}$/m'], '', (string) file_get_contents($header)));
            }
        }
        throw self::unavailable('the engine header privacy_relay.h was not found next to the library, in the package\'s '
            . 'native/ or in sdks/rust/ffi/include; copy it next to libprivacy_relay.so.');
    }

    /** @return array<string,mixed> */
    public static function verifyInclusionProof(mixed $proof, mixed $sth, mixed $jwks, mixed $options = null): array
    {
        return self::jsonCall('pr_verify_inclusion_proof', self::jsonText($proof), self::jsonText($sth), self::jsonText($jwks),
            self::jsonText($options));
    }

    /**
     * A transparency-log consistency proof from the signed tree head you kept ($oldHead) to a newer one
     * ($options['new_head'], default the proof's "sth"), both given as decoded values: ['valid', 'reason', 'checks'].
     * @return array<string,mixed>
     */
    public static function verifyConsistencyProof(mixed $proof, mixed $oldHead, mixed $jwks, mixed $options = null): array
    {
        // the proof and the head are values, always encoded (null, a string: the engine answers a verdict naming them)
        return self::jsonCall('pr_verify_consistency_proof', self::jsonValue($proof), self::jsonValue($oldHead), self::jsonText($jwks),
            self::jsonText($options));
    }

    /**
     * An export of receipt chains (the gateway's receipt_chain_export as JSON text or value, its JSON Lines text, or a
     * list of receipts); options ['now_seconds', 'allow_gaps']: ['valid', 'chains' => [per chain as verifyChain]].
     * A string is taken as the export's text as it is (JSON or JSON Lines).
     * @return array<string,mixed>
     */
    public static function verifyChainExport(mixed $exported, mixed $jwks, mixed $options = null): array
    {
        return self::jsonCall('pr_verify_chain_export', self::jsonText($exported), self::jsonText($jwks), self::jsonText($options));
    }

    /**
     * A hash of $data as lowercase hex: kind "sha256", "json_body_sha256" (of the JCS form of a JSON body),
     * "merkle_leaf" (SHA-256(0x00||data)) or "merkle_node" (SHA-256(0x01||left||right), $data the 64 bytes).
     */
    public static function hash(string $kind, string $data): string
    {
        return self::call('pr_hash', self::cstr($kind), $data, strlen($data));
    }

    /**
     * The signature header a webhook sender puts on a delivery: scheme "v1" ("t=<timestamp>,v1=<hex>" of the exact
     * body; options ['timestamp']) or "v0" ("sha256=<hex>" of the payload's JCS form; $body the payload's JSON text).
     */
    public static function signWebhook(string $scheme, string $body, string $secret, mixed $options = null): string
    {
        return self::call('pr_sign_webhook', self::cstr($scheme), self::cstr($body), self::cstr($secret), self::jsonText($options));
    }

    /**
     * An RFC 9162 Merkle proof on bare hex hashes: kind "inclusion" (['leaf_index', 'tree_size', 'leaf_hash',
     * 'root_hash', 'audit_path']) or "consistency" (['first', 'second', 'first_root', 'second_root',
     * 'consistency_path']): ['valid' => bool].
     * @return array<string,mixed>
     */
    public static function verifyMerkleProof(string $kind, mixed $input): array
    {
        return self::jsonCall('pr_verify_merkle_proof', self::cstr($kind), self::jsonText($input));
    }

    /** An alias tag: kind "request" (4 characters) or "stable" (10) of $message under the hex secret: ['hmac_sha256', 'tag']. */
    public static function aliasTag(string $kind, string $secretHex, string $message): array
    {
        return self::jsonCall('pr_alias_tag', self::cstr($kind), self::cstr($secretHex), $message, strlen($message));
    }

    /** Whether $text is exactly one alias. */
    public static function isAlias(string $text): bool
    {
        return self::call('pr_is_alias', self::cstr($text)) === 'true';
    }

    /** @return array<string,mixed> */
    public static function buildAttestation(mixed $input, mixed $privateJwk): array
    {
        return self::jsonCall('pr_build_attestation', self::jsonText($input), self::jsonText($privateJwk));
    }

    /** @return array<string,mixed> */
    public static function debugPanic(): array
    {
        return self::jsonCall('pr_debug_panic');
    }

    public static function errorCodeName(int $number): ?string
    {
        $p = self::load()->pr_error_code_name($number);
        return $p === null ? null : (is_string($p) ? $p : \FFI::string($p));
    }

    // --- plumbing ----------------------------------------------------------------------------------------------

    /** A PHP value as JSON text (a string is taken as JSON text already); null stays NULL. */
    public static function jsonText(mixed $value): ?string
    {
        if ($value === null || is_string($value)) {
            return self::cstr($value);
        }
        return json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    }

    /** Any PHP value (a string too) as JSON text. */
    public static function jsonValue(mixed $value): string
    {
        return json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    }

    /** A string for a const char* argument: one holding NUL cannot cross the ABI whole, refused here. */
    public static function cstr(?string $value): ?string
    {
        if ($value !== null && str_contains($value, "\0")) {
            throw new EngineException('a string argument holds a NUL character', 0, 'invalid_argument');
        }
        return $value;
    }

    /** Calls $name(...$args, &out); answers the returned text (freed), or throws the error the library reported. */
    public static function call(string $name, mixed ...$args): string
    {
        $ffi = self::load();
        $out = $ffi->new('char*');
        $rc = $ffi->$name(...[...$args, \FFI::addr($out)]);
        $text = self::take($out);
        if ($rc !== 0) {
            throw self::errorOf($rc, $text);
        }
        return $text ?? '';
    }

    /** @return array<string,mixed> */
    public static function jsonCall(string $name, mixed ...$args): array
    {
        $value = json_decode(self::call($name, ...$args), true, 512, JSON_THROW_ON_ERROR);
        return is_array($value) ? $value : [];
    }

    /** The string at a char* (UTF-8), freed with pr_string_free. */
    public static function take(\FFI\CData $out): ?string
    {
        if (\FFI::isNull($out)) {
            return null;
        }
        try {
            return \FFI::string($out);
        } finally {
            self::load()->pr_string_free($out);
        }
    }

    public static function errorOf(int $rc, ?string $text): EngineException|InvalidRequestException|UnsupportedContentException
    {
        $parsed = json_decode((string) $text, true);
        $error = is_array($parsed) && is_array($parsed['error'] ?? null) ? $parsed['error'] : [];
        $code = is_string($error['code'] ?? null) ? $error['code'] : (self::errorCodeName($rc) ?? 'engine_error');
        $message = is_string($error['message'] ?? null) ? $error['message'] : "the engine failed ($code)";
        if (is_string($error['details']['path'] ?? null)) {
            $message .= ' (at ' . $error['details']['path'] . ')';
        }
        if ($code === 'invalid_request' || $code === 'unsupported_field') {
            return new InvalidRequestException($message, 400, $code, null, $error);
        }
        if ($code === 'unsupported_content') {
            return new UnsupportedContentException($message, 415, $code, null, $error);
        }
        return new EngineException($message, 0, $code, null, $error);
    }
}
