<?php

declare(strict_types=1);

namespace PrivacyRelay;

/**
 * Restores originals in a decoded JSON value, string by string. The value of an "arguments" key (a tool call's
 * arguments: JSON text inside a JSON string, in chat completions and Responses function calls) takes the originals
 * escaped for the inside of a JSON string, so it still parses when an original holds a quote, a backslash or a
 * newline. One copy, for non-streamed answers and for the whole events of a stream.
 */
final class JsonRestore
{
    /**
     * The alias map with its originals as they appear inside a JSON string.
     *
     * @param array<string,string> $map
     * @return array<string,string>
     */
    public static function escapedMap(array $map): array
    {
        $escaped = [];
        foreach ($map as $alias => $original) {
            $escaped[$alias] = substr(json_encode($original, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), 1, -1);
        }
        return $escaped;
    }

    /**
     * @param array<string,string> $map
     * @param array<string,string>|null $escaped the escaped map, when the caller already has it
     */
    public static function restore(mixed $value, array $map, ?array $escaped = null, bool $jsonText = false): mixed
    {
        if ($map === []) {
            return $value;
        }
        if (is_string($value)) {
            return Native::detokenise($value, $jsonText ? ($escaped ?? self::escapedMap($map)) : $map);
        }
        if (is_array($value)) {
            $escaped ??= self::escapedMap($map);
            foreach ($value as $k => $v) {
                $value[$k] = self::restore($v, $map, $escaped, $k === 'arguments');
            }
        }
        return $value;
    }
}
