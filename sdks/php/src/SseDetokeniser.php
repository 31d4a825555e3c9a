<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\StreamException;

/**
 * Parses the gateway's SSE byte stream and restores originals as chunks arrive: one engine Detokeniser per
 * streamed field (chat: choices[i].delta.content and tool-call arguments; messages: text_delta and
 * input_json_delta per content block), so an alias cut across frames is held back until whole. push() answers the
 * events ready now, each [event name|null, data text, decoded value|null]; finish() flushes what was held back.
 */
final class SseDetokeniser
{
    /** @var array<string,Detokeniser> */
    private array $fields = [];
    /** @var array<string,string> originals as they appear inside a JSON string */
    private array $escaped = [];
    private string $buffer = '';
    public ?array $receipt = null;
    public bool $completed = false;
    private mixed $lastId = null;
    private mixed $lastModel = null;
    /** Responses: synthetic events inserted so far; every later sequence_number moves up by as many. */
    private int $shift = 0;
    private const RESPONSES_TERMINAL = ['response.completed', 'response.incomplete', 'response.failed'];

    /** @param array<string,string> $map */
    public function __construct(private string $route, private array $map)
    {
        $this->escaped = JsonRestore::escapedMap($map);
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    public function push(string $bytes): array
    {
        $this->buffer .= $bytes;
        $out = [];
        while (preg_match('/\r?\n\r?\n/', $this->buffer, $m, PREG_OFFSET_CAPTURE)) {
            $end = $m[0][1];
            $raw = substr($this->buffer, 0, $end);
            $this->buffer = substr($this->buffer, $end + strlen($m[0][0]));
            if (!mb_check_encoding($raw, 'UTF-8')) {
                throw new StreamException('The gateway sent a stream frame that is not UTF-8.', 200, 'stream_error');
            }
            array_push($out, ...$this->handle($raw));
        }
        return $out;
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    public function finish(): array
    {
        if (trim($this->buffer) !== '') {
            $this->buffer = '';
            $this->close();
            throw new StreamException('The stream ended in the middle of a frame.', 200, 'stream_error');
        }
        if ($this->route === 'chat.completions') {
            return $this->releaseAllChat();
        }
        if ($this->route === 'responses') {
            $out = [];
            foreach (array_keys($this->fields) as $key) {
                array_push($out, ...$this->responsesRelease((string) $key, null));
            }
            return $out;
        }
        $out = [];
        foreach (array_keys($this->fields) as $key) {
            $text = $this->release($key);
            if ($text === '') {
                continue;
            }
            $delta = $key[0] === 'b' ? ['type' => 'text_delta', 'text' => $text] : ['type' => 'input_json_delta', 'partial_json' => $text];
            $out[] = $this->event('content_block_delta', ['type' => 'content_block_delta', 'index' => (int) substr($key, 1), 'delta' => $delta]);
        }
        return $out;
    }

    public function close(): void
    {
        foreach ($this->fields as $d) {
            $d->close();
        }
        $this->fields = [];
    }

    private function field(string $key, bool $jsonText): Detokeniser
    {
        return $this->fields[$key] ??= new Detokeniser($jsonText ? $this->escaped : $this->map);
    }

    private function release(string $key): string
    {
        $d = $this->fields[$key] ?? null;
        unset($this->fields[$key]);
        return $d === null ? '' : $d->finish();
    }

    /** @return array{0:?string,1:string,2:mixed} */
    private function event(?string $name, array $value): array
    {
        return [$name, json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), $value];
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    private function releaseAllChat(): array
    {
        $choices = [];
        foreach (array_keys($this->fields) as $key) {
            $text = $this->release((string) $key);
            if ($text === '' || !preg_match('/^([ct])(\d+)(?:\.(\d+))?$/', (string) $key, $m)) {
                continue;
            }
            $delta = $m[1] === 'c' ? ['content' => $text]
                : ['tool_calls' => [['index' => (int) ($m[3] ?? 0), 'function' => ['arguments' => $text]]]];
            $choices[] = ['index' => (int) $m[2], 'delta' => $delta, 'finish_reason' => null];
        }
        if ($choices === []) {
            return [];
        }
        return [$this->event(null, ['id' => $this->lastId, 'object' => 'chat.completion.chunk', 'model' => $this->lastModel, 'choices' => $choices])];
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    private function chatFrame(array $chunk): array
    {
        $this->lastId = $chunk['id'] ?? $this->lastId;
        $this->lastModel = $chunk['model'] ?? $this->lastModel;
        foreach (is_array($chunk['choices'] ?? null) ? $chunk['choices'] : [] as $ci => $choice) {
            if (!is_array($choice)) {
                continue;
            }
            $i = $choice['index'] ?? 0;
            $delta = is_array($choice['delta'] ?? null) ? $choice['delta'] : null;
            if ($delta !== null && is_string($delta['content'] ?? null)) {
                $delta['content'] = $this->field("c$i", false)->push($delta['content']);
            }
            foreach ($delta !== null && is_array($delta['tool_calls'] ?? null) ? $delta['tool_calls'] : [] as $k => $call) {
                if (is_array($call) && is_string($call['function']['arguments'] ?? null)) {
                    $delta['tool_calls'][$k]['function']['arguments'] =
                        $this->field("t$i." . ($call['index'] ?? 0), true)->push($call['function']['arguments']);
                }
            }
            if ($delta !== null) {
                $choice['delta'] = $delta;
            }
            if (($choice['finish_reason'] ?? null) !== null) {
                $rest = $this->release("c$i");
                if ($rest !== '') {
                    $before = is_string($delta['content'] ?? null) ? $delta['content'] : '';
                    $choice['delta'] = array_merge($delta ?? [], ['content' => $before . $rest]);
                }
                foreach (array_keys($this->fields) as $key) {
                    if (!str_starts_with((string) $key, "t$i.")) {
                        continue;
                    }
                    $args = $this->release((string) $key);
                    if ($args !== '') {
                        $choice['delta']['tool_calls'][] = ['index' => (int) explode('.', (string) $key)[1], 'function' => ['arguments' => $args]];
                    }
                }
            }
            $chunk['choices'][$ci] = $choice;
        }
        return [$this->event(null, $chunk)];
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    private function messagesFrame(?string $name, array $value): array
    {
        $index = $value['index'] ?? 0;
        if (($value['type'] ?? null) === 'content_block_delta' && is_array($value['delta'] ?? null)) {
            $delta = $value['delta'];
            if (($delta['type'] ?? null) === 'text_delta' && is_string($delta['text'] ?? null)) {
                $value['delta']['text'] = $this->field("b$index", false)->push($delta['text']);
            }
            if (($delta['type'] ?? null) === 'input_json_delta' && is_string($delta['partial_json'] ?? null)) {
                $value['delta']['partial_json'] = $this->field("j$index", true)->push($delta['partial_json']);
            }
            return [$this->event($name, $value)];
        }
        if (($value['type'] ?? null) === 'content_block_stop') {
            $out = [];
            $text = $this->release("b$index");
            if ($text !== '') {
                $out[] = $this->event('content_block_delta', ['type' => 'content_block_delta', 'index' => $index, 'delta' => ['type' => 'text_delta', 'text' => $text]]);
            }
            $partial = $this->release("j$index");
            if ($partial !== '') {
                $out[] = $this->event('content_block_delta', ['type' => 'content_block_delta', 'index' => $index, 'delta' => ['type' => 'input_json_delta', 'partial_json' => $partial]]);
            }
            $out[] = $this->event($name, $value);
            return $out;
        }
        if (($value['type'] ?? null) === 'message_stop') {
            $this->completed = true;
        }
        return [$this->event($name, $value)];
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    private function handle(string $raw): array
    {
        $name = null;
        $data = [];
        foreach (preg_split('/\r?\n/', $raw) as $line) {
            if (str_starts_with($line, 'event:')) {
                $name = trim(substr($line, 6));
            } elseif (str_starts_with($line, 'data:')) {
                $v = substr($line, 5);
                $data[] = str_starts_with($v, ' ') ? substr($v, 1) : $v;
            }
        }
        if ($data === []) {
            return [];
        }
        $text = implode("\n", $data);
        if ($name === 'receipt-v2') {
            $r = json_decode($text, true);
            if (!is_array($r)) {
                throw new StreamException('The receipt-v2 trailer is not JSON.', 200, 'stream_error');
            }
            $this->receipt = $r;
            return [[$name, $text, $r]];
        }
        if ($text === '[DONE]') {
            $this->completed = true;
            return [...($this->route === 'chat.completions' ? $this->releaseAllChat() : []), [$name, $text, null]];
        }
        try {
            $value = json_decode($text, true, 512, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            throw new StreamException('The gateway sent a stream frame that is not JSON.', 200, 'stream_error');
        }
        if (!is_array($value) || $name === 'error' || ($value['type'] ?? null) === 'error') {
            return [[$name, $text, $value]];
        }
        return match ($this->route) {
            'chat.completions' => $this->chatFrame($value),
            'responses' => $this->responsesFrame($name, $value),
            default => $this->messagesFrame($name, $value),
        };
    }

    // --- OpenAI Responses (as sdks/typescript/src/sseDetokeniser.ts): every *.delta event's delta streams through
    // its own detokeniser keyed by event type and item; its *.done event releases what was held back as one more
    // *.delta event just before it (later sequence numbers shift by one) and carries its whole value restored;
    // every other event is whole in one frame and restored string by string (arguments JSON with escaped originals).

    private function renumbered(array $v): array
    {
        if (is_int($v['sequence_number'] ?? null)) {
            $v['sequence_number'] += $this->shift;
        }
        return $v;
    }

    private static function responsesKey(string $deltaType, array $v): string
    {
        return implode('|', ['r', $deltaType, $v['item_id'] ?? '', $v['output_index'] ?? '', $v['content_index'] ?? '', $v['summary_index'] ?? '']);
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    private function responsesRelease(string $key, ?int $next): array
    {
        $rest = $this->release($key);
        if ($rest === '') {
            return [];
        }
        [, $deltaType, $itemId, $outputIndex, $contentIndex, $summaryIndex] = explode('|', $key);
        $ev = ['type' => $deltaType];
        if ($next !== null) {
            $ev['sequence_number'] = $next + $this->shift;
            $this->shift++;
        }
        if ($itemId !== '') {
            $ev['item_id'] = $itemId;
        }
        foreach (['output_index' => $outputIndex, 'content_index' => $contentIndex, 'summary_index' => $summaryIndex] as $k => $x) {
            if ($x !== '') {
                $ev[$k] = (int) $x;
            }
        }
        $ev['delta'] = $rest;
        return [$this->event($deltaType, $ev)];
    }

    /** @return list<array{0:?string,1:string,2:mixed}> */
    private function responsesFrame(?string $name, array $v): array
    {
        $type = is_string($v['type'] ?? null) ? $v['type'] : ($name ?? '');
        if (str_ends_with($type, '.delta') && is_string($v['delta'] ?? null)) {
            $out = $this->renumbered($v);
            $out['delta'] = $this->field(self::responsesKey($type, $v), str_contains($type, 'arguments'))->push($v['delta']);
            return [$this->event($name, $out)];
        }
        $before = [];
        $seq = is_int($v['sequence_number'] ?? null) ? $v['sequence_number'] : null;
        if (str_ends_with($type, '.done')) {
            array_push($before, ...$this->responsesRelease(self::responsesKey(substr($type, 0, -5) . '.delta', $v), $seq));
        }
        if (in_array($type, self::RESPONSES_TERMINAL, true)) {
            foreach (array_keys($this->fields) as $key) {
                array_push($before, ...$this->responsesRelease((string) $key, $seq));
            }
            $this->completed = true;
        }
        $before[] = $this->event($name, JsonRestore::restore($this->renumbered($v), $this->map, $this->escaped));
        return $before;
    }
}
