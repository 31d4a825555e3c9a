<?php

declare(strict_types=1);

namespace PrivacyRelay;

use PrivacyRelay\Exception\EngineException;

/**
 * A streaming detokeniser (one engine handle per streamed field): push() chunks and get the text safe to show now
 * (an alias cut between chunks is held back until it is whole); finish() releases what was held back and frees
 * the handle; close() frees it early; the destructor frees a forgotten one. One handle, one thread.
 */
final class Detokeniser
{
    private ?\FFI\CData $handle;

    /** @param array<string,string>|list<array{0:string,1:string}>|string $map alias => original */
    public function __construct(mixed $map)
    {
        $ffi = Native::load();
        $handle = $ffi->new('pr_detokeniser*');
        $out = $ffi->new('char*');
        $rc = $ffi->pr_detokeniser_new(Native::jsonText(is_array($map) && $map === [] ? new \stdClass() : $map),
            \FFI::addr($handle), \FFI::addr($out));
        $text = Native::take($out);
        if ($rc !== 0) {
            throw Native::errorOf($rc, $text);
        }
        $this->handle = $handle;
    }

    public function isClosed(): bool
    {
        return $this->handle === null;
    }

    public function push(string $chunk): string
    {
        return Native::call('pr_detokeniser_push', $this->live(), Native::cstr($chunk));
    }

    /** What was held back; the handle is freed afterwards. */
    public function finish(): string
    {
        try {
            return Native::call('pr_detokeniser_finish', $this->live());
        } finally {
            $this->close();
        }
    }

    public function close(): void
    {
        if ($this->handle !== null) {
            $h = $this->handle;
            $this->handle = null;
            Native::load()->pr_detokeniser_free($h);
        }
    }

    public function __destruct()
    {
        $this->close();
    }

    private function live(): \FFI\CData
    {
        if ($this->handle === null) {
            throw new EngineException('this detokeniser is closed (finish or close was called)', 0, 'detokeniser_closed');
        }
        return $this->handle;
    }
}
