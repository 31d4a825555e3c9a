"""Alias formats. Per-request (default): `<TYPE_N_tag>`: N numbers values of a type by first appearance in ONE
request; tag = 4 characters of HMAC-SHA256(request secret, "TYPE_N#attempt"). Stable: `<TYPE_tag10>`: 10
characters of HMAC-SHA256(device-held secret, "TYPE\\0value"), the same in every request made with that secret."""

from __future__ import annotations

import regex

ALIAS_PATTERN = regex.compile(r"<[A-Z][A-Z0-9_]*_(?:[0-9]+_[a-z2-9]{4}|[a-z2-9]{10})>")
TAG_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # 32 symbols, no l/o/0/1
REQUEST_TAG_LENGTH = 4
STABLE_TAG_LENGTH = 10


def format_alias(type_: str, index: int, tag: str) -> str:
    return f"<{type_}_{index}_{tag}>"


def format_stable_alias(type_: str, tag: str) -> str:
    return f"<{type_}_{tag}>"


def tag_from_mac(mac: bytes, length: int = REQUEST_TAG_LENGTH) -> str:
    """The first `length` characters (5 bits from each byte) of a MAC, in the tag alphabet."""
    return "".join(TAG_ALPHABET[mac[i] & 31] for i in range(length))


def is_alias(text: str) -> bool:
    return ALIAS_PATTERN.fullmatch(text) is not None
