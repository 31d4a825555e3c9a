<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Detokeniser;
use PrivacyRelay\Native;

/** Every file of sdks/vectors through the binding, byte for byte (testEveryVectorFileIsReadHere keeps it so). */
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
        self::spansOf($this, self::v('tokeniser-spans'));
    }

    /**
     * tokeniser-large.json: a short unit repeated up to millions of times, then a real value. The value after the run
     * is found (PCRE2's limit once ended the search there) and the engine answers instead of failing.
     */
    public function testTokeniserSpansAfterPathologicalLongRuns(): void
    {
        $v = self::v('tokeniser-large');
        $options = ['names' => $v->engine_settings->names, 'phone_regions' => $v->engine_settings->phone_regions];
        $this->assertNotEmpty($v->cases);
        foreach ($v->cases as $c) {
            $text = str_repeat($c->unit, $c->times) . $c->tail;
            $spans = array_map(static fn ($s) => ['start' => $s['start'], 'end' => $s['end'], 'type' => $s['type'], 'value' => $s['value']],
                Native::detectSpans($text, $options)['spans']);
            $this->assertSame(self::arr($c->spans), $spans, $c->name);
        }
    }

    private static function spansOf(self $test, object $v): void
    {
        $options = ['names' => $v->engine_settings->names, 'phone_regions' => $v->engine_settings->phone_regions];
        foreach ($v->cases as $c) {
            $spans = array_map(static fn ($s) => ['start' => $s['start'], 'end' => $s['end'], 'type' => $s['type'], 'value' => $s['value']],
                Native::detectSpans($c->text, $options)['spans']);
            $test->assertSame(self::arr($c->spans), $spans, $c->text);
        }
    }

    /**
     * The built-in name model (sdks/vectors/name-model.json's rules and lists) on tokeniser-names.json, every case
     * compared at once so a failure lists each text whose spans differ.
     */
    public function testTokeniserNames(): void
    {
        $v = self::v('tokeniser-names');
        $options = ['names' => $v->engine_settings->names, 'phone_regions' => $v->engine_settings->phone_regions];
        $want = [];
        $got = [];
        foreach ($v->cases as $c) {
            $want["[$c->language] $c->text"] = self::arr($c->spans);
            $got["[$c->language] $c->text"] = array_map(static fn ($s) => ['start' => $s['start'], 'end' => $s['end'], 'type' => $s['type'],
                'value' => $s['value']], Native::detectSpans($c->text, $options)['spans']);
        }
        $this->assertNotEmpty($want);
        $this->assertSame($want, $got);
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

    public function testAliasTagsAndPattern(): void
    {
        $a = self::v('aliases');
        $this->assertNotEmpty($a->is_alias);
        foreach ($a->is_alias as $c) {
            $this->assertSame($c->alias, Native::isAlias($c->text), $c->text);
        }
        $this->assertSame([$a->request_tag_length, $a->stable_tag_length],
            [strlen($a->tags->per_request[0]->tag), strlen($a->tags->stable[0]->tag)]);
        foreach (['per_request' => ['request', 'request_secret_hex'], 'stable' => ['stable', 'stable_secret_hex']] as $group => [$kind, $secret]) {
            $this->assertNotEmpty($a->tags->$group);
            foreach ($a->tags->$group as $t) {
                $this->assertSame(['hmac_sha256' => $t->hmac_sha256, 'tag' => $t->tag], Native::aliasTag($kind, $a->$secret, $t->message), $t->message);
                $this->assertSame('', str_replace(str_split($a->tag_alphabet), '', $t->tag), $t->tag);
                $this->assertTrue(Native::isAlias($t->alias), $t->alias);
            }
        }
        try {
            Native::aliasTag('sideways', '00', 'x');
            $this->fail('an unknown kind accepted');
        } catch (\PrivacyRelay\Exception\EngineException $e) {
            $this->assertSame('invalid_argument', $e->errorCode);
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

    /**
     * valid, verified, gaps and the break (index, seq, kind, reason) of one chain verdict, as the Rust suite compares
     * them; compared with assertSame, so a seq must come back as the integer the vector writes (not 4.0).
     */
    private static function chainVerdict(array $chain, array $extra = []): array
    {
        $out = [];
        foreach ([...$extra, 'valid', 'verified', 'gaps'] as $k) {
            $out[$k] = $chain[$k] ?? null;
        }
        $b = $chain['break'] ?? null;
        $out['break'] = $b === null ? null : array_intersect_key($b, array_flip(['index', 'seq', 'kind', 'reason']));
        return $out;
    }

    public function testReceiptChains(): void
    {
        $r = self::v('receipts');
        $this->assertNotEmpty($r->chains);
        foreach ($r->chains as $c) {
            $got = Native::verifyChain($c->receipts, $r->jwks, ['now_seconds' => $c->now_seconds, 'allow_gaps' => ($c->allow_gaps ?? false) === true]);
            $this->assertSame(self::chainVerdict(self::arr($c->expected)), self::chainVerdict($got), $c->name);
        }
    }

    public function testReceiptChainExports(): void
    {
        $r = self::v('receipts');
        $this->assertNotEmpty($r->chain_exports);
        foreach ($r->chain_exports as $c) {
            $got = Native::verifyChainExport($c->input, $r->jwks, ['now_seconds' => $c->now_seconds, 'allow_gaps' => ($c->allow_gaps ?? false) === true]);
            $want = self::arr($c->expected);
            $this->assertSame($want['valid'], $got['valid'], $c->name);
            $this->assertSame(array_map(static fn ($x) => self::chainVerdict($x, ['chain_id', 'count']), $want['chains']),
                array_map(static fn ($x) => self::chainVerdict($x, ['chain_id', 'count']), $got['chains']), $c->name);
        }
    }

    public function testTransparencyConsistencyProofs(): void
    {
        $t = self::v('transparency');
        $this->assertNotEmpty($t->consistency);
        foreach ($t->consistency as $c) {
            $options = property_exists($c, 'new_head') ? ['new_head' => $c->new_head] : null;
            $got = Native::verifyConsistencyProof($c->proof, $c->old_head, $t->jwks, $options);
            $this->assertEquals(self::arr($c->expected), $got, $c->name);
        }
    }

    public function testSha256(): void
    {
        $v = self::v('sha256');
        foreach ($v->text as $c) {
            $this->assertSame($c->utf8_hex, bin2hex($c->text), $c->text);
            $this->assertSame($c->sha256, Native::hash('sha256', $c->text), $c->text);
        }
        foreach ($v->json_body as $c) {
            $body = is_string($c->body) ? $c->body : json_encode($c->body, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
            $this->assertSame($c->sha256, Native::hash('json_body_sha256', $body), $c->name);
        }
        $m = $v->merkle;
        $this->assertSame($m->empty_tree_root, Native::hash('sha256', ''));
        foreach ($m->leaf as $c) {
            $this->assertSame($c->leaf_hash, Native::hash('merkle_leaf', (string) hex2bin($c->data_hex)));
        }
        foreach ($m->node as $c) {
            $this->assertSame($c->node_hash, Native::hash('merkle_node', (string) hex2bin($c->left_hex . $c->right_hex)));
        }
        try {
            Native::hash('md5', 'x');
            $this->fail('md5 accepted');
        } catch (\PrivacyRelay\Exception\EngineException $e) {
            $this->assertSame('invalid_argument', $e->errorCode);
        }
    }

    /** RFC 9162 2.1.1: the root of n leaves; the largest power of two below n splits it. */
    private static function merkleRoot(array $leafHashes): string
    {
        $n = count($leafHashes);
        if ($n === 0) {
            return Native::hash('sha256', '');
        }
        if ($n === 1) {
            return $leafHashes[0];
        }
        $k = 1;
        while ($k << 1 < $n) {
            $k <<= 1;
        }
        return Native::hash('merkle_node', (string) hex2bin(self::merkleRoot(array_slice($leafHashes, 0, $k))
            . self::merkleRoot(array_slice($leafHashes, $k))));
    }

    public function testMerkleProofs(): void
    {
        $m = self::v('merkle-proofs');
        $tree = $m->reference_tree;
        $this->assertSame($tree->leaf_hashes, array_map(static fn ($l) => Native::hash('merkle_leaf', (string) hex2bin($l)), $tree->leaves));
        foreach ($tree->roots as $r) {
            $this->assertSame($r->root_hash, self::merkleRoot(array_slice($tree->leaf_hashes, 0, $r->tree_size)), "root of {$r->tree_size}");
        }
        $this->assertGreaterThan(700, count($m->inclusion) + count($m->consistency));
        foreach (['inclusion', 'consistency'] as $kind) {
            foreach ($m->$kind as $c) {
                $this->assertSame($c->valid, Native::verifyMerkleProof($kind, $c)['valid'], $c->name);
            }
        }
    }

    public function testWebhookSigningAndAWholeDelivery(): void
    {
        $w = self::v('webhooks');
        foreach ($w->sign as $c) {
            $this->assertSame($c->v1, Native::signWebhook('v1', $c->body, $w->secret, ['timestamp' => $c->timestamp]));
            $this->assertSame($c->v0, Native::signWebhook('v0', json_encode($c->payload, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), $w->secret));
            $this->assertSame(['ok' => true], Native::verifyWebhook($c->body, ['X-Service-Signature' => $c->v1], $w->secret,
                ['now_seconds' => $c->timestamp]));
        }
        $d = $w->delivery;
        $headers = self::arr($d->headers);
        $this->assertSame($headers['X-Service-Signature'], Native::signWebhook('v1', $d->body, $w->secret, ['timestamp' => $d->payload->timestamp]));
        $this->assertSame(['ok' => true], Native::verifyWebhook($d->body, $headers, $w->secret, ['now_seconds' => $d->payload->timestamp]));
    }

    /** The library applies the policy file of this checkout (compiled in): same version, same bytes. */
    public function testEgressPolicyIsTheOneCompiledIntoTheEngine(): void
    {
        $text = (string) file_get_contents(dirname(__DIR__, 2) . '/vectors/egress-policy.json');
        $this->assertSame(['version' => json_decode($text, true)['version'], 'sha256' => Native::hash('sha256', $text)],
            Native::engineInfo()['egress_policy']);
    }

    /**
     * The builtin name model compiled into the engine is name-model.json's lexicon: as many distinct given names and
     * surnames as its faker, compromise and frequent lists hold, and faker's place and calendar words.
     */
    public function testTheEnginesNameListsAreTheNameModelsLexicon(): void
    {
        $lexicon = self::v('name-model')->lexicon;
        $distinct = static fn (string $key): int => count(array_unique(array_merge($lexicon->faker->$key, $lexicon->compromise->$key, $lexicon->frequent->$key)));
        $this->assertSame(['given_names' => $distinct('given'), 'surnames' => $distinct('surnames'),
            'place_words' => count($lexicon->faker->places), 'calendar_words' => count($lexicon->faker->calendar)], Native::engineInfo()['gazetteer']);
    }

    /** A vector file added to sdks/vectors fails here until a test of this file reads it. */
    public function testEveryVectorFileIsReadHere(): void
    {
        $source = (string) file_get_contents(__FILE__);
        foreach (glob(dirname(__DIR__, 2) . '/vectors/*.json') as $f) {
            $name = basename($f, '.json');
            $this->assertTrue(str_contains($source, "v('$name')") || str_contains($source, "/vectors/$name.json"), "$name.json is not run through the binding");
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
