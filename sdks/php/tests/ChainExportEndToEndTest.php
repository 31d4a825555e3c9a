<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\Client;
use PrivacyRelay\Native;

/**
 * Native::verifyChainExport on what a live gateway hands out: the organisation's stored receipts
 * (GET /api/v1/receipts, its complete export) and the receipts the client was given with its answers (the shape
 * the MCP tool receipt_chain_export writes), each as a list, as JSON Lines and as the export object. An export with
 * a receipt changed, left out or moved is refused and the break is named.
 */
final class ChainExportEndToEndTest extends TestCase
{
    private Client $client;
    /** @var list<array<string,mixed>> the v2 receipts of the answers, oldest first */
    private array $given = [];

    protected function setUp(): void
    {
        [$this->client] = TestGateway::get()->portalClient(['ability:billing.read']);
        foreach (['one', 'two', 'three'] as $text) {
            $this->given[] = $this->client->chat->completions->create(['model' => 'local-chat', 'messages' => [['role' => 'user', 'content' => $text]]])->receipt;
        }
    }

    /** @return list<array<string,mixed>> the organisation's stored receipts, every page, oldest first */
    private function stored(): array
    {
        $all = [];
        $cursor = null;
        do {
            $page = $this->client->rest->receipts->list(limit: 2, cursor: $cursor);
            array_push($all, ...$page['receipts']);
            $cursor = $page['next_cursor'];
        } while ($cursor !== null);
        return array_reverse($all);
    }

    /** @param list<array<string,mixed>> $receipts @return array{chains:list<array>,jsonl:string} receipt_chain_export's shape */
    private static function exportOf(array $receipts): array
    {
        return ['chains' => [['chain_id' => $receipts[0]['chain']['chain_id'], 'count' => count($receipts), 'receipts' => $receipts]],
            'jsonl' => self::jsonl($receipts)];
    }

    /** @param list<array<string,mixed>> $receipts */
    private static function jsonl(array $receipts): string
    {
        return implode("\n", array_map(static fn ($r) => json_encode($r, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), $receipts));
    }

    public function testTheStoredAndTheGivenReceiptsVerifyAsExportsInEveryForm(): void
    {
        $stored = $this->stored();
        $this->assertSame(array_column($this->given, 'jti'), array_column($stored, 'jti'), 'every call stored, in order');
        foreach (['stored' => $stored, 'given' => $this->given] as $which => $receipts) {
            $export = self::exportOf($receipts);
            foreach (['a list' => $receipts, 'JSON Lines' => $export['jsonl'], 'the export object' => $export,
                'the export as JSON text' => json_encode($export, JSON_UNESCAPED_SLASHES)] as $form => $input) {
                $verdict = Native::verifyChainExport($input, $this->client->jwks());
                $this->assertTrue($verdict['valid'], "$which as $form: " . json_encode($verdict));
                $this->assertCount(1, $verdict['chains']);
                $chain = $verdict['chains'][0];
                $this->assertSame([$receipts[0]['chain']['chain_id'], 3, 3, 1, 3, null, []],
                    [$chain['chain_id'], $chain['count'], $chain['verified'], $chain['first_seq'], $chain['last_seq'], $chain['break'], $chain['gaps']],
                    "$which as $form");
            }
        }
    }

    public function testATamperedReorderedOrShortenedLiveExportIsRefusedAtTheBreak(): void
    {
        $stored = $this->stored();
        $jwks = $this->client->jwks();
        $changed = $stored;
        $changed[1]['claims']['tokens_out'] += 1;
        $given = $this->given;
        $given[1]['output_tokens'] += 1;
        foreach ([
            'a stored receipt changed' => [self::jsonl($changed), 'tampered', 1, 2],
            'a given receipt changed' => [self::exportOf($given), 'tampered', 1, 2],
            'a stored receipt left out' => [self::jsonl([$stored[0], $stored[2]]), 'gap', 1, 3],
            'two given receipts swapped' => [[$this->given[0], $this->given[2], $this->given[1]], 'reorder', 1, 3],
        ] as $case => [$input, $kind, $index, $seq]) {
            $verdict = Native::verifyChainExport($input, $jwks);
            $this->assertFalse($verdict['valid'], $case);
            $break = $verdict['chains'][0]['break'];
            $this->assertSame([$kind, $index, $seq], [$break['kind'], $break['index'], $break['seq']], "$case: " . json_encode($break));
        }
        $allowed = Native::verifyChainExport(self::jsonl([$stored[0], $stored[2]]), $jwks, ['allow_gaps' => true]);
        $this->assertTrue($allowed['valid'], 'a gap is listed, not a break, when gaps are allowed');
        $this->assertSame([['index' => 1, 'after_seq' => 1, 'seq' => 3]], $allowed['chains'][0]['gaps']);
    }
}
