"""French social security number (NIR) with its key = 97 - (13-digit number mod 97); Corsica 2A/2B."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex

_SHAPE = jsregex.compile(r"^([12])(\d{2})(\d{2})(\d{2}|2A|2B)(\d{3})(\d{3})(\d{2})$")
_NIR = jsregex.compile(r"(?<![\p{L}\p{N}])[12](?:([ .]?)\d{2}\1\d{2}\1(?:\d{2}|2[AB])\1\d{3}\1\d{3}\1\d{2})(?![\p{L}\p{N}])", "gu")


def is_valid_fr_nir(value: str) -> bool:
    v = value.upper().replace(" ", "").replace(".", "")
    v = "".join(c for c in v if not c.isspace())
    m = _SHAPE.search(v)
    if m is None:
        return False
    month = int(m.group(3))
    if not (1 <= month <= 12 or 20 <= month <= 42 or 50 <= month <= 99):
        return False
    dept = "19" if m.group(4) == "2A" else "18" if m.group(4) == "2B" else m.group(4)
    body = int(m.group(1) + m.group(2) + m.group(3) + dept + m.group(5) + m.group(6))
    return 97 - body % 97 == int(m.group(7))


fr_nir_detector = Detector(
    "FR_NIR", lambda text: spans_from_regex(text, _NIR, "FR_NIR", lambda m: (m.start(), m.end()) if is_valid_fr_nir(m.group(0)) else None)
)
