"""Restoring originals: whole texts, and streams whose chunk boundaries may cut an alias in two."""

from __future__ import annotations

from typing import Mapping

from .alias import ALIAS_PATTERN


def detokenise(text: str, aliases: Mapping[str, str]) -> str:
    """Restores the originals of aliases in `aliases`; any other alias-shaped text is left untouched."""
    if "<" not in text:
        return text
    return ALIAS_PATTERN.sub(lambda m: aliases.get(m.group(0), m.group(0)), text)


class StreamingDetokeniser:
    """An alias starts with its only "<" and ends with its only ">", so only the text from the LAST "<" can be the
    start of an alias still arriving: it is held back while it is a proper prefix of an alias in the map, and
    everything before it is released. The concatenated output equals `detokenise` of the whole text."""

    def __init__(self, aliases: Mapping[str, str]) -> None:
        self._map = aliases
        self._aliases = list(aliases.keys())
        self._pending = ""

    def push(self, chunk: str) -> str:
        self._pending += chunk
        lt = self._pending.rfind("<")
        if lt != -1:
            tail = self._pending[lt:]
            if any(len(a) > len(tail) and a.startswith(tail) for a in self._aliases):
                ready = self._pending[:lt]
                self._pending = tail
                return detokenise(ready, self._map)
        ready, self._pending = self._pending, ""
        return detokenise(ready, self._map)

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        return detokenise(rest, self._map)
