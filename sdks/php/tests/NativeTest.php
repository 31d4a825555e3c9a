<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;
use PrivacyRelay\Detokeniser;
use PrivacyRelay\Exception\EngineException;
use PrivacyRelay\Exception\EngineUnavailableException;
use PrivacyRelay\Exception\InvalidRequestException;
use PrivacyRelay\Native;

/** The binding itself: loading, error mapping (null, non-JSON, panics), detokeniser handles. */
final class NativeTest extends TestCase
{
    public function testLoadsTheEngineOfThisAbi(): void
    {
        $info = Native::engineInfo();
        $this->assertSame('relay-rs', $info['id']);
        $this->assertSame(Native::ABI_VERSION, $info['abi_version']);
        $this->assertMatchesRegularExpression('/^[0-9a-f]{64}$/', $info['sha256']);
        $this->assertSame(Native::ABI_VERSION, Native::load()->pr_abi_version());
    }

    public function testNullArgumentIsATypedError(): void
    {
        try {
            Native::canonicalize(null);
            $this->fail('no exception');
        } catch (EngineException $e) {
            $this->assertSame('null_argument', $e->errorCode);
            $this->assertSame('null_argument', $e->code());
        }
    }

    public function testNonJsonIsATypedError(): void
    {
        $this->expectException(EngineException::class);
        try {
            Native::tokeniseRequest('chat.completions', '{not json');
        } catch (EngineException $e) {
            $this->assertSame('invalid_json', $e->errorCode);
            $this->assertNotSame('', $e->getMessage());
            throw $e;
        }
    }

    public function testUnknownRouteAndUnknownOption(): void
    {
        foreach ([fn () => Native::tokeniseRequest('nope', ['model' => 'm']), fn () => Native::tokeniseText('x', ['bogus' => 1])] as $f) {
            try {
                $f();
                $this->fail('no exception');
            } catch (EngineException $e) {
                $this->assertSame('invalid_argument', $e->errorCode);
            }
        }
    }

    public function testEngineRefusalsMapToInvalidRequestWithThePath(): void
    {
        // The engine's unsupported_field (PR_E_UNSUPPORTED_FIELD = 6) as the ABI writes it to *out.
        $e = Native::errorOf(6, '{"error":{"code":"unsupported_field","message":"not sent","details":{"path":"/invented"}}}');
        $this->assertInstanceOf(InvalidRequestException::class, $e);
        $this->assertSame(400, $e->status);
        $this->assertSame('unsupported_field', $e->errorCode);
        $this->assertStringContainsString('/invented', $e->getMessage());
        try {
            Native::tokeniseRequest('chat.completions', ['model' => 'm', 'messages' => [['role' => 'user', 'content' => 'hi']], 'invented' => 1]);
            $this->fail('the engine sent a field the egress policy does not name');
        } catch (InvalidRequestException $e) {
            $this->assertSame('unsupported_field', $e->errorCode);
            $this->assertSame('/invented', $e->body['details']['path']);
        }
        $f = Native::errorOf(3, null);
        $this->assertInstanceOf(EngineException::class, $f);
        $this->assertSame('invalid_json', $f->errorCode, 'the code name from pr_error_code_name when *out is empty');
    }

    public function testNulInsideAStringIsRefusedBeforeTheCall(): void
    {
        $this->expectException(EngineException::class);
        Native::tokeniseText("a\0b");
    }

    public function testAPanicInsideTheEngineIsAnInternalError(): void
    {
        try {
            Native::debugPanic();
            $this->fail('no exception');
        } catch (EngineException $e) {
            $this->assertSame('internal_error', $e->errorCode);
        }
        $this->assertSame('{"a":1}', Native::canonicalize('{ "a" : 1 }'), 'the library still works');
        $this->assertSame('invalid_json', Native::errorCodeName(3));
    }

    public function testDetokeniserLifecycle(): void
    {
        $d = new Detokeniser(['<EMAIL_1_abcd>' => 'a@b.c']);
        $this->assertSame('hi ', $d->push('hi <EMA'));
        $this->assertSame('a@b.c x', $d->push('IL_1_abcd> x'));
        $this->assertSame(' ', $d->push(' <EMAIL_'), 'a possible alias start is held back');
        $this->assertFalse($d->isClosed());
        $this->assertSame('<EMAIL_', $d->finish(), 'and released as it came at the end');
        $this->assertTrue($d->isClosed());
        try {
            $d->push('more');
            $this->fail('push after finish');
        } catch (EngineException $e) {
            $this->assertSame('detokeniser_closed', $e->errorCode);
        }
        $d->close(); // idempotent
        $e = new Detokeniser([['<X_1_a>', 'y']]);
        $this->assertSame('', $e->push('<X_1'));
        $this->assertSame('<X_1', $e->finish(), 'an unfinished alias is released as it came');
        $f = new Detokeniser([]);
        $f->close();
        $this->assertTrue($f->isClosed());
        for ($i = 0; $i < 200; $i++) { // handles freed by close and by the destructor
            $g = new Detokeniser(['<A_1_b>' => 'c']);
            $g->push('<A_');
            if ($i % 2 === 0) {
                $g->close();
            }
        }
        $this->expectException(EngineException::class);
        new Detokeniser('{broken');
    }

    public function testMissingLibraryIsAClearErrorNotACrash(): void
    {
        $saved = Native::path();
        try {
            Native::load('/nonexistent/libprivacy_relay.so');
            $this->fail('no exception');
        } catch (EngineUnavailableException $e) {
            $this->assertSame('engine_unavailable', $e->errorCode);
            $this->assertStringContainsString('/nonexistent/libprivacy_relay.so', $e->getMessage());
        }
        try {
            Native::load('/etc/hostname');
            $this->fail('no exception');
        } catch (EngineUnavailableException $e) {
            $this->assertStringContainsString('cannot be loaded', $e->getMessage());
        }
        $this->assertSame($saved, Native::path(), 'a failed load leaves the loaded library in place');
    }

    public function testFfiDisabledIsAClearError(): void
    {
        $out = [];
        exec(escapeshellarg(PHP_BINARY) . ' -n -d ffi.enable=0 -d extension=ffi -r ' . escapeshellarg(
            'require ' . var_export(dirname(__DIR__) . '/autoload.php', true) . '; try { PrivacyRelay\Native::load(); }'
            . ' catch (PrivacyRelay\Exception\EngineUnavailableException $e) { echo get_class($e), ": ", $e->getMessage(); }') . ' 2>&1', $out);
        $text = implode("\n", $out);
        $this->assertStringContainsString('EngineUnavailableException', $text);
        $this->assertMatchesRegularExpression('/FFI (is disabled|extension is not loaded)/', $text);
    }

    /** A library exporting every function the header declares (so it loads), whose pr_abi_version() answers $abi. */
    private static function stubEngine(int $abi): string
    {
        $header = (string) file_get_contents(dirname(__DIR__, 2) . '/rust/ffi/include/privacy_relay.h');
        preg_match_all('/\b(pr_[a-z0-9_]+)\s*\(/', $header, $m);
        $names = array_values(array_unique($m[1]));
        self::assertContains('pr_abi_version', $names);
        $c = implode("\n", array_map(static fn ($n) => $n === 'pr_abi_version' ? "int $n(void){return $abi;}" : "void $n(void){}", $names));
        $dir = sys_get_temp_dir() . '/pr-php-abi-' . bin2hex(random_bytes(3));
        mkdir($dir);
        file_put_contents("$dir/stub.c", $c);
        // cc is there: sdks/php/ci.sh builds the engine with cargo, which links with it
        exec('cc -shared -fPIC -o ' . escapeshellarg("$dir/libprivacy_relay.so") . ' ' . escapeshellarg("$dir/stub.c") . ' 2>&1', $out, $rc);
        self::assertSame(0, $rc, 'cc: ' . implode("\n", $out));
        return "$dir/libprivacy_relay.so";
    }

    public function testAnEngineOfAnotherAbiVersionIsRefusedAtClientConstruction(): void
    {
        $stub = self::stubEngine(2);
        Native::load();
        $loaded = Native::path();
        try {
            new Client(gatewayUrl: 'https://relay.example', apiKey: 'svc_abc', library: $stub);
            $this->fail('an engine of ABI version 2 was accepted');
        } catch (EngineUnavailableException $e) {
            $this->assertSame('engine_unavailable', $e->errorCode);
            $this->assertStringContainsString("the engine library $stub has ABI version 2; this SDK", $e->getMessage());
            $this->assertStringContainsString('needs ' . Native::ABI_VERSION, $e->getMessage());
        } finally {
            exec('rm -rf ' . escapeshellarg(dirname($stub)));
        }
        $this->assertSame($loaded, Native::path(), 'the engine loaded before stays in use');
        $this->assertSame('{"a":1}', Native::canonicalize('{ "a" : 1 }'));
    }

    /**
     * The header privacy_relay.h is read next to the library, else in the package's native/, else in a source
     * checkout: a copy of the package outside the checkout, the library in a folder of its own.
     * @return array<string,mixed> what tests/fixtures/load-engine.php printed
     */
    private static function loadFromACopy(?string $headerIn): array
    {
        $root = sys_get_temp_dir() . '/pr-php-vendored-' . bin2hex(random_bytes(3));
        mkdir("$root/pkg/native", 0700, true);
        mkdir("$root/lib");
        exec('cp -R ' . escapeshellarg(dirname(__DIR__) . '/src') . ' ' . escapeshellarg(dirname(__DIR__) . '/autoload.php') . ' '
            . escapeshellarg("$root/pkg/"), $o, $rc);
        self::assertSame(0, $rc);
        Native::load();
        copy((string) Native::path(), "$root/lib/libprivacy_relay.so");
        if ($headerIn !== null) {
            copy(dirname(__DIR__, 2) . '/rust/ffi/include/privacy_relay.h', "$root/$headerIn/privacy_relay.h");
        }
        $out = [];
        exec(implode(' ', array_map('escapeshellarg', [PHP_BINARY, __DIR__ . '/fixtures/load-engine.php', "$root/pkg/autoload.php",
            "$root/lib/libprivacy_relay.so"])) . ' 2>&1', $out, $rc);
        exec('rm -rf ' . escapeshellarg($root));
        self::assertSame(0, $rc, implode("\n", $out));
        return json_decode(implode("\n", $out), true) ?? ['unreadable' => $out];
    }

    public function testAMissingHeaderIsAClearErrorAndTheHeaderIsFoundNextToTheLibraryOrInNative(): void
    {
        $missing = self::loadFromACopy(null);
        $this->assertSame(EngineUnavailableException::class, $missing['class'] ?? null, json_encode($missing));
        $this->assertSame('engine_unavailable', $missing['code']);
        $this->assertStringContainsString('privacy_relay.h was not found', $missing['message']);
        $this->assertSame(['loaded' => Native::ABI_VERSION], self::loadFromACopy('lib'), 'next to the library');
        $this->assertSame(['loaded' => Native::ABI_VERSION], self::loadFromACopy('pkg/native'), "in the package's native/");
    }
}
