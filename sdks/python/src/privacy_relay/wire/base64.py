"""Strict base64 codecs: values that are not in canonical form are rejected, never "repaired"."""

from __future__ import annotations

import base64 as _b64
import binascii
import json
from typing import Any

_URL_ALPHABET = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_STD_ALPHABET = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def b64url_encode(data: bytes) -> str:
    """base64url without padding (RFC 4648 section 5): signatures, JWK coordinates, key ids."""
    return _b64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def b64url_decode(text: str) -> bytes:
    """Strict base64url: no padding, no foreign characters, zero trailing bits. Raises ValueError."""
    if not isinstance(text, str) or any(c not in _URL_ALPHABET for c in text) or len(text) % 4 == 1:
        raise ValueError("invalid base64url")
    data = _b64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url_encode(data) != text:
        raise ValueError("invalid base64url: non-zero trailing bits")
    return data


def b64_encode(data: bytes) -> str:
    """Standard alphabet, padded (RFC 4648 section 4): the receipt and attestation headers."""
    return _b64.b64encode(data).decode("ascii")


def b64_decode(text: str) -> bytes:
    """Strict standard padded base64. Raises ValueError."""
    if not isinstance(text, str) or len(text) % 4 != 0:
        raise ValueError("invalid base64: length is not a multiple of 4")
    body = text.rstrip("=")
    if len(text) - len(body) > 2 or any(c not in _STD_ALPHABET for c in body):
        raise ValueError("invalid base64")
    try:
        data = _b64.b64decode(text, validate=True)
    except binascii.Error as error:
        raise ValueError(f"invalid base64: {error}") from error
    if b64_encode(data) != text:
        raise ValueError("invalid base64: non-zero trailing bits")
    return data


def encode_json_header(value: Any) -> str:
    """Standard padded base64 of the compact JSON text (what JSON.stringify would produce for these envelopes)."""
    return b64_encode(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def decode_json_header(value: str) -> Any:
    """Decodes a header value to JSON; raises ValueError when it is not padded base64 of UTF-8 JSON."""
    return json.loads(b64_decode(value.strip()).decode("utf-8", errors="strict"))
