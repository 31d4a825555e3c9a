"""What the verifiers accept for an envelope: the object, its JSON text, or the standard base64 header value."""

from __future__ import annotations

import json
from typing import Any

from ..wire.base64 import decode_json_header


class _Undecodable:
    def __init__(self, problem: str) -> None:
        self.problem = problem


def decode_envelope_input(value: Any) -> tuple[bool, Any]:
    """(True, envelope) or (False, problem). A string starting with `{` is JSON text, any other a header value."""
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return False, "the value is neither JSON text nor standard padded base64 of a JSON envelope"
    if not isinstance(value, str):
        return True, value
    text = value.strip()
    try:
        return True, (json.loads(text) if text.startswith("{") else decode_json_header(text))
    except (ValueError, UnicodeDecodeError):
        return False, (
            "the value is not valid JSON text"
            if text.startswith("{")
            else "the value is neither JSON text nor standard padded base64 of a JSON envelope"
        )


def envelope_or_raw(value: Any) -> Any:
    """The decoded envelope, or the value as given when it cannot be decoded (the verifier reports it)."""
    ok, decoded = decode_envelope_input(value)
    return decoded if ok else value
