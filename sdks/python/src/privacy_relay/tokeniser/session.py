"""Everything that belongs to ONE request: its secret, its aliases, its counters. Never reuse across requests."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Optional

from .alias import ALIAS_PATTERN, STABLE_TAG_LENGTH, format_alias, format_stable_alias, tag_from_mac


class TokeniserSession:
    def __init__(self, *, secret: Optional[bytes] = None, stable_alias_secret: Optional[bytes] = None) -> None:
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self._stable = stable_alias_secret
        #: Alias -> original, in order of creation. It never leaves the device.
        self.map: dict[str, str] = {}
        self._by_value: dict[tuple[str, str], str] = {}
        self._counters: dict[str, int] = {}
        #: Categories and how many values of each were replaced (never the values).
        self.detectors_fired: dict[str, int] = {}
        self._observed: set[str] = set()
        self.name_model_skipped = False

    def observe(self, text: str) -> None:
        """Registers text of this request so that no alias can equal a string already present in it."""
        if "<" in text:
            self._observed.update(ALIAS_PATTERN.findall(text))

    def _candidate(self, type_: str, index: int, value: str, attempt: int) -> str:
        if self._stable is None:
            mac = hmac.new(self._secret, f"{type_}_{index}#{attempt}".encode("utf-8"), hashlib.sha256).digest()
            return format_alias(type_, index, tag_from_mac(mac))
        message = f"{type_}\0{value}" if attempt == 0 else f"{type_}\0{value}\0{attempt}"
        mac = hmac.new(self._stable, message.encode("utf-8"), hashlib.sha256).digest()
        return format_stable_alias(type_, tag_from_mac(mac, STABLE_TAG_LENGTH))

    def alias_for(self, type_: str, value: str) -> str:
        """The alias of `value` as `type_`; the same pair always gets the same alias within the session."""
        key = (type_, value)
        existing = self._by_value.get(key)
        if existing is not None:
            return existing
        index = self._counters.get(type_, 0) + 1
        self._counters[type_] = index
        attempt = 0
        while True:
            alias = self._candidate(type_, index, value, attempt)
            if alias not in self.map and alias not in self._observed:
                break
            attempt += 1
        self.map[alias] = value
        self._by_value[key] = alias
        return alias

    def count_fired(self, type_: str) -> None:
        self.detectors_fired[type_] = self.detectors_fired.get(type_, 0) + 1
