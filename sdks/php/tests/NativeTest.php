<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
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

    public function testWrongAbiVersionIsRefused(): void
    {
        // A library that answers pr_abi_version() = 2: a tiny C build when cc is present.
        $cc = trim((string) shell_exec('command -v cc'));
        if ($cc === '') {
            $this->markTestSkipped('no C compiler');
        }
        $dir = sys_get_temp_dir() . '/pr-php-abi-' . bin2hex(random_bytes(3));
        mkdir($dir);
        file_put_contents("$dir/x.c", 'int pr_abi_version(void){return 2;}');
        exec("$cc -shared -fPIC -o $dir/libx.so $dir/x.c 2>&1", $o, $rc);
        $this->assertSame(0, $rc, implode("\n", $o));
        try {
            Native::load("$dir/libx.so");
            $this->fail('no exception');
        } catch (EngineUnavailableException $e) {
            $this->assertMatchesRegularExpression('/ABI version 2|cannot be loaded/', $e->getMessage());
        }
    }
}
