<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Detokeniser;
use PrivacyRelay\Native;

/** sdks/vectors through the binding, byte for byte, where the C ABI exposes the operation. */
final class VectorsTest extends TestCase
{
    /** Decoded with objects kept as objects, so what is re-encoded for the engine is the same JSON. */
    private static function v(string $name): object
    {
        return json_decode((string) file_get_contents(dirname(__DIR__, 2) . "/vectors/$name.json"), false, 512, JSON_THROW_ON_ERROR);
    }

    private static function arr(mixed $v): mixed
    {
        return json_decode(json_encode($v), true);
    }

    public function testJcs(): void
    {
        foreach (self::v('jcs')->cases as $c) {
            $input = is_string($c->input) ? $c->input : json_encode($c->input);
            $this->assertSame($c->canonical, Native::canonicalize($input), $c->name);
        }
    }

    public function testTokeniserSpans(): void
    {
        $v = self::v('tokeniser-spans');
        $options = ['names' => $v->engine_settings->names, 'phone_regions' => $v->engine_settings->phone_regions];
        foreach ($v->cases as $c) {
            $spans = array_map(static fn ($s) => ['start' => $s['start'], 'end' => $s['end'], 'type' => $s['type'], 'value' => $s['value']],
                Native::detectSpans($c->text, $options)['spans']);
            $this->assertSame(self::arr($c->spans), $spans, $c->text);
        }
    }

    public function testAliasesTokeniseAndStreams(): void
    {
        $a = self::v('aliases');
        foreach ($a->tokenise as $c) {
            $out = Native::tokeniseText($c->text, ['names' => 'off', 'secret_hex' => $a->request_secret_hex]);
            $this->assertSame($c->output, $out['text']);
            $this->assertSame(self::arr($c->map), $out['map']);
            $this->assertEquals(self::arr($c->detectors_fired), $out['detectors_fired']);
        }
        foreach ($a->tokenise_stable as $c) {
            $out = Native::tokeniseText($c->text, ['names' => 'off', 'secret_hex' => $a->request_secret_hex,
                'stable_alias_secret_hex' => $a->stable_secret_hex]);
            $this->assertSame($c->output, $out['text']);
            $this->assertSame(self::arr($c->map), $out['map']);
        }
        foreach ($a->streams as $c) {
            $d = new Detokeniser($c->map);
            $this->assertSame($c->outputs, array_map(static fn ($chunk) => $d->push($chunk), $c->chunks), $c->name);
            $this->assertSame($c->flush, $d->finish(), $c->name);
            $this->assertSame($c->joined, Native::detokenise(implode('', $c->chunks), $c->map), $c->name);
        }
    }

    public function testWebhooks(): void
    {
        foreach (self::v('webhooks')->verify as $c) {
            $options = ['now_seconds' => $c->now_seconds];
            if (isset($c->tolerance_seconds)) {
                $options['tolerance_seconds'] = $c->tolerance_seconds;
            }
            $got = Native::verifyWebhook($c->body, $c->headers, $c->secret, $options);
            $this->assertSame($c->expected->ok, $got['ok'], $c->name);
            if (isset($c->expected->code)) {
                $this->assertSame($c->expected->code, $got['code'], $c->name);
            }
        }
    }

    public function testReceipts(): void
    {
        $r = self::v('receipts');
        foreach ($r->cases as $c) {
            $options = ['now_seconds' => $c->now_seconds];
            foreach (['previous', 'attestation'] as $k) {
                if (property_exists($c, $k)) {
                    $options[$k] = $c->$k;
                }
            }
            $input = is_string($c->input) ? $c->input : json_encode($c->input, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
            $got = Native::verifyReceipt($input, $c->jwks ?? $r->jwks, $options);
            $this->assertSame($c->expected->valid, $got['valid'], $c->name);
            $this->assertSame($c->expected->reason ?? null, $got['reason'], $c->name);
        }
    }

    public function testEgressPolicyCases(): void
    {
        foreach (self::v('egress-policy-cases')->cases as $c) {
            $expected = self::arr($c->expected);
            try {
                $out = Native::tokeniseRequest($c->route, $c->body, $c->options);
                $got = ['body_jcs' => $out['body_text'], 'passthrough' => $out['passthrough'] ?? [],
                    'detectors_fired' => $out['detectors_fired'], 'map' => $out['map']];
                foreach ($c->never_sent ?? [] as $value) {
                    $this->assertStringNotContainsString($value, $out['body_text'], $c->name);
                }
            } catch (\PrivacyRelay\Exception\PrivacyRelayException $e) {
                $refusal = ['code' => $e->errorCode, 'path' => $e->body['details']['path'] ?? null];
                if (isset($e->body['details']['kind'])) {
                    $refusal['kind'] = $e->body['details']['kind'];
                }
                $got = ['refusal' => $refusal];
            }
            if (isset($expected['refusal'])) {
                $this->assertEquals($expected['refusal'], $got['refusal'] ?? $got, $c->name);
            } else {
                $this->assertSame($expected['body_jcs'], $got['body_jcs'] ?? null, $c->name);
                $this->assertEquals($expected['passthrough'], $got['passthrough'], $c->name);
                $this->assertEquals($expected['detectors_fired'], $got['detectors_fired'], $c->name);
                $this->assertSame($expected['map'], $got['map'], $c->name);
            }
        }
    }

    public function testTransparencyInclusionProofs(): void
    {
        $t = self::v('transparency');
        foreach ($t->cases as $c) {
            $options = property_exists($c, 'receipt') ? ['receipt' => $c->receipt] : null;
            $got = Native::verifyInclusionProof($c->proof, $c->sth ?? null, $t->jwks, $options);
            $this->assertEquals(self::arr($c->expected), $got, $c->name);
        }
    }

    public function testAttestationOfflineVerdicts(): void
    {
        foreach (self::v('attestation')->verify as $c) {
            $got = Native::verifyReceipt($c->header, ['keys' => []], ['now_seconds' => $c->now_seconds]);
            $this->assertSame($c->expected->offline->valid, $got['valid'], $c->name);
            $this->assertSame($c->expected->offline->reason ?? null, $got['reason'], $c->name);
        }
    }

    public function testAttestationBuild(): void
    {
        $v = self::v('attestation');
        foreach ($v->build as $c) {
            $input = clone $c->input;
            $input->deterministic = true;
            $got = Native::buildAttestation($input, $v->device_key->private_jwk);
            $this->assertSame($c->header, $got['header'], $c->name);
        }
    }
}
