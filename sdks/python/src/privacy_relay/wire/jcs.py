"""RFC 8785 JSON Canonicalization Scheme (JCS): the bytes every hash and signature of the relay covers.

Members sorted by their UTF-16 code units, numbers in ECMAScript form, no insignificant whitespace,
strings with only the mandatory escapes. Written out here because no Debian package provides it;
sdks/vectors/jcs.json proves it byte for byte.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

_MAX_SAFE_INTEGER = 2**53 - 1
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def es_number(value: int | float) -> str:
    """The ECMAScript Number::toString form of a JSON number (RFC 8785 section 3.2.2.3)."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    if isinstance(value, int) and abs(value) <= _MAX_SAFE_INTEGER:
        return str(value)
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        raise ValueError("NaN and Infinity have no JSON form")
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # repr is the shortest string that round-trips (the digits ECMAScript asks for).
    parts = Decimal(repr(abs(number))).as_tuple()
    digits = "".join(str(d) for d in parts.digits).lstrip("0") or "0"
    exponent = int(parts.exponent)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = exponent + k
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')


def _escape(match: "re.Match[str]") -> str:
    ch = match.group(0)
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if ord(ch) >= 0xD800:
        raise ValueError("a lone surrogate has no canonical JSON form")
    return f"\\u{ord(ch):04x}"


def _string(value: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, value) + '"'


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def canonical_string(value: Any) -> str:
    """The JCS text of a JSON value. Raises for values JSON cannot represent."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return es_number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_string(item) for item in value) + "]"
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError("JSON object keys must be strings")
        members = sorted(value.items(), key=lambda item: _utf16_key(item[0]))
        return "{" + ",".join(_string(k) + ":" + canonical_string(v) for k, v in members) + "}"
    raise TypeError(f"{type(value).__name__} has no JSON representation")


def canonical_bytes(value: Any) -> bytes:
    """The UTF-8 bytes of the JCS text: exactly what gets hashed and signed."""
    return canonical_string(value).encode("utf-8")


def parse_json_bytes(data: bytes) -> Any:
    """Parses a JSON document given as UTF-8 bytes; raises ValueError on invalid UTF-8 or JSON."""
    return json.loads(data.decode("utf-8", errors="strict"))
