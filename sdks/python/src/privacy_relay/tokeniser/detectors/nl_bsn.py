"""Dutch citizen service number (BSN): 9 digits passing the 11-proof, after a cue or label, or dotted."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex
from .context import text_before
from .field_kinds import field_kind_at, mentioned_before

_CUE = jsregex.compile(
    r"\b(?:bsn|burgerservicenummer|burger ?service ?nummer|sofinummer|sofi-nummer|citizen service number)\b[\s-]*(?:nr\.?|nummer|number|no\.?|is|:)?\s*[:#]?\s*$",
    "i",
)
_BSN = jsregex.compile(r"(?<![\p{L}\p{N}.])(\d{4})([. ]?)(\d{2})\2(\d{3})(?![\p{N}]|[.]\d)", "gu")


def is_valid_bsn(digits: str) -> bool:
    if len(digits) != 9 or not digits.isdigit() or not all("0" <= c <= "9" for c in digits) or digits == "000000000":
        return False
    total = sum((9 - i) * int(digits[i]) for i in range(8)) - int(digits[8])
    return total % 11 == 0


def _accept(text: str, m):
    if not is_valid_bsn(m.group(1) + m.group(3) + m.group(4)):
        return None
    if (
        m.group(2) == "."
        or _CUE.search(text_before(text, m.start(), 50))
        or mentioned_before("bsn", text, m.start())
        or field_kind_at(text, m.start(), m.end()) == "bsn"
    ):
        return (m.start(), m.end())
    return None


nl_bsn_detector = Detector("NL_BSN", lambda text: spans_from_regex(text, _BSN, "NL_BSN", lambda m: _accept(text, m)))
