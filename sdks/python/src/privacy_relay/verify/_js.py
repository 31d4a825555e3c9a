"""JSON value predicates with the meaning the wire contract gives them (JSON numbers are IEEE 754 doubles)."""

from __future__ import annotations

from typing import Any

from ..wire.jcs import es_number

MAX_SAFE_INTEGER = 2**53 - 1


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_safe_integer(value: Any) -> bool:
    if not is_number(value):
        return False
    if isinstance(value, float) and not value.is_integer():
        return False
    return abs(value) <= MAX_SAFE_INTEGER


def is_count(value: Any) -> bool:
    return is_safe_integer(value) and value >= 0


def js_string(value: Any) -> str:
    """How a JSON value reads in a message (String(value)): numbers in their JSON form, absent as 'undefined'."""
    if value is _MISSING:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if is_number(value):
        return es_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    return "[object Object]"


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()
MISSING: Any = _MISSING
