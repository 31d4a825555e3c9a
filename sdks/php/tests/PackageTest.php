<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Native;

/**
 * package.sh makes what a user installs: unpacked anywhere, with no PRIVACY_RELAY_LIB and no source checkout around
 * it, the SDK finds the engine and its header in the package's native/ and the packaged quickstart runs against a
 * real gateway.
 */
final class PackageTest extends TestCase
{
    public function testTheArchiveRunsOnItsOwn(): void
    {
        $dir = sys_get_temp_dir() . '/pr-php-package-' . bin2hex(random_bytes(3));
        mkdir($dir, 0700);
        try {
            $run = static function (array $cmd, array $env) use ($dir): array {
                $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, $dir, $env);
                $text = (string) stream_get_contents($pipes[1]);
                fclose($pipes[1]);
                return [proc_close($proc), $text];
            };
            Native::load();
            $env = ['PRIVACY_RELAY_LIB' => (string) Native::path()] + getenv(); // the library ci.sh built: no cargo here
            [$rc, $out] = $run([dirname(__DIR__) . '/package.sh', "$dir/dist"], $env);
            $this->assertSame(0, $rc, $out);
            $archive = trim($out);
            $this->assertMatchesRegularExpression('#/privacy-relay-php-\d+\.\d+\.\d+\.tar\.gz$#', $archive);
            exec('tar -xzf ' . escapeshellarg($archive) . ' -C ' . escapeshellarg($dir), $o, $rc);
            $this->assertSame(0, $rc);
            $pkg = "$dir/privacy-relay-php";

            unset($env['PRIVACY_RELAY_LIB']);
            $relay = TestGateway::get();
            [$key] = $relay->fundedKey();
            file_put_contents("$dir/gateway-key", "$key\n");
            chmod("$dir/gateway-key", 0600);
            $env += ['GATEWAY_URL' => $relay->url, 'PRIVACY_RELAY_KEY_FILE' => "$dir/gateway-key"];
            [$rc, $where] = $run([PHP_BINARY, '-r', 'require $argv[1]; PrivacyRelay\Native::load(); echo PrivacyRelay\Native::path();', "$pkg/autoload.php"], $env);
            $this->assertSame([0, "$pkg/native/libprivacy_relay.so"], [$rc, $where], 'the engine found in the package');
            [$rc, $text] = $run([PHP_BINARY, "$pkg/examples/quickstart.php"], $env);
            $this->assertSame(0, $rc, $text);
            $this->assertStringContainsString('jane.doe@example.com', $text);
            $this->assertStringContainsString('receipt verified: yes', $text);
        } finally {
            exec('rm -rf ' . escapeshellarg($dir));
        }
    }
}
