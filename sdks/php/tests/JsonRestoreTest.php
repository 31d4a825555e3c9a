<?php

declare(strict_types=1);

namespace PrivacyRelay\Tests;

use PHPUnit\Framework\TestCase;
use PrivacyRelay\JsonRestore;

/**
 * A non-streamed answer restored value by value: content takes the original as it is; a tool call's arguments
 * (JSON text in a JSON string) still parse and hold the original even when it has a quote or a backslash.
 */
final class JsonRestoreTest extends TestCase
{
    private const MAP = ['<PERSON_1_abcd>' => "Jo \"Q\" O'Neil \\ x", '<EMAIL_1_ynha>' => 'jane@example.com'];

    public function testContentAndToolCallArgumentsAreRestored(): void
    {
        $args = json_encode(['to' => '<PERSON_1_abcd>', 'cc' => '<EMAIL_1_ynha>']);
        $answer = [
            'choices' => [['message' => ['content' => 'Hi <PERSON_1_abcd>',
                'tool_calls' => [['function' => ['name' => 'mail', 'arguments' => $args]]]]]],
            'output' => [['type' => 'function_call', 'arguments' => $args]],
            'n' => 1,
        ];
        $restored = JsonRestore::restore($answer, self::MAP);
        $message = $restored['choices'][0]['message'];
        $this->assertSame("Hi Jo \"Q\" O'Neil \\ x", $message['content']);
        $this->assertSame(['to' => self::MAP['<PERSON_1_abcd>'], 'cc' => 'jane@example.com'],
            json_decode($message['tool_calls'][0]['function']['arguments'], true, 512, JSON_THROW_ON_ERROR));
        $this->assertSame(self::MAP['<PERSON_1_abcd>'],
            json_decode($restored['output'][0]['arguments'], true, 512, JSON_THROW_ON_ERROR)['to']);
        $this->assertSame(1, $restored['n']);
    }

    public function testAnEmptyMapLeavesTheValueAlone(): void
    {
        $this->assertSame(['a' => ['<EMAIL_1_ynha>']], JsonRestore::restore(['a' => ['<EMAIL_1_ynha>']], []));
    }
}
