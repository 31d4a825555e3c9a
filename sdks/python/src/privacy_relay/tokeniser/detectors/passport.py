"""Passport numbers: no common check rule, so only after a passport cue or in a field labelled as one; the token
must contain a digit, so words are never taken."""

from __future__ import annotations

from .. import jsregex
from ..types import Span
from . import Detector, spans_from_regex
from .field_kinds import fields_of_kind, mentioned_before

_PASSPORT = jsregex.compile(
    r"(?:\b(?:n[º°o]\.?\s*(?:de\s+)?)?(?:passport|passeport|reisepass|pass|pasaporte|passaporto|passaporte|paspoort)(?:nummer|nr\.?|nummer)?(?:\s*-?\s*(?:no\.?|nr\.?|number|num\.?|n[º°o.]\.?|#|nummer|número|numéro|numero|id))?\s*(?:[:#]|is|lautet)?\s*)([A-Z0-9]{6,9})(?![\p{L}\p{N}])",
    "giu",
)
_CUE_WORD = jsregex.compile(r"(?:passport|passeport|reisepass|pasaporte|passaporto|passaporte|paspoort|pass-?(?:nr|nummer))", "i")
_TOKEN = jsregex.compile(r"(?<![\p{L}\p{N}])[A-Z0-9]{6,9}(?![\p{L}\p{N}])", "u")
_DIGIT = jsregex.compile(r"\d")


def _acceptable(value: str) -> bool:
    return _DIGIT.search(value) is not None and value == value.upper()


def _detect(text: str) -> list[Span]:
    # Every way to announce a passport (the cue words, a passport label) contains "pas": without it there is none.
    if "pas" not in text.casefold():
        return []
    def cued(m):
        value = m.group(1)
        if not _acceptable(value) or not _CUE_WORD.search(m.group(0)):
            return None
        start = m.end() - len(value)
        return (start, start + len(value))

    out = spans_from_regex(text, _PASSPORT, "PASSPORT", cued)
    out += spans_from_regex(
        text, _TOKEN, "PASSPORT", lambda m: (m.start(), m.end()) if _acceptable(m.group(0)) and mentioned_before("passport", text, m.start()) else None
    )
    for f in fields_of_kind(text, "passport"):
        m = _TOKEN.search(text[f.start:f.end])
        if m is not None and _acceptable(m.group(0)):
            out.append(Span(f.start + m.start(), f.start + m.end(), "PASSPORT"))
    return out


passport_detector = Detector("PASSPORT", _detect)
