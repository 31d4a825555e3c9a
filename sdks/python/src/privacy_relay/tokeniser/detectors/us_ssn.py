"""US social security numbers: printed AAA-GG-SSSS anywhere; nine bare digits only after an SSN cue or label."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex
from .context import follows_non_personal_label, text_before
from .field_kinds import field_kind_at, whole_value_kind_at

_PRINTED = jsregex.compile(r"(?<![\d\-])(\d{3})([\- ])(\d{2})\2(\d{4})(?![\d]|-\d)", "g")
_BARE = jsregex.compile(r"(?<![\d\-])(\d{3})(\d{2})(\d{4})(?![\d]|-\d)", "g")
_CUE = jsregex.compile(r"\b(?:ssn|social security(?: number| no\.?)?|soc\.? sec\.?(?: no\.?)?)\s*(?:#|no\.?|number)?\s*[:#]?\s*$", "i")
_ENDS_WITH_LETTER = jsregex.compile(r"[\p{L}]$", "u")


def is_valid_ssn(area: str, group: str, serial: str) -> bool:
    a = int(area)
    return a != 0 and a != 666 and a < 900 and group != "00" and serial != "0000"


def _detect(text: str):
    printed = spans_from_regex(
        text,
        _PRINTED,
        "US_SSN",
        lambda m: (m.start(), m.end())
        if is_valid_ssn(m.group(1), m.group(3), m.group(4))
        and not follows_non_personal_label(text, m.start())
        and whole_value_kind_at(text, m.start(), m.end()) != "reference"
        and not _ENDS_WITH_LETTER.search(text[:m.start()])
        else None,
    )
    bare = spans_from_regex(
        text,
        _BARE,
        "US_SSN",
        lambda m: (m.start(), m.end())
        if is_valid_ssn(m.group(1), m.group(2), m.group(3))
        and (_CUE.search(text_before(text, m.start(), 40)) is not None or field_kind_at(text, m.start(), m.start() + 9) == "ssn")
        else None,
    )
    return printed + bare


us_ssn_detector = Detector("US_SSN", _detect)
