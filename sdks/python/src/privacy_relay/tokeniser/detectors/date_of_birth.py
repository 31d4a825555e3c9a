"""Dates of birth: a date is personal data here only when introduced as a birth date (a cue or a labelled field);
other dates are left alone. The span is the date itself, not the cue."""

from __future__ import annotations

from .. import jsregex
from ..types import Span
from . import Detector, spans_from_regex
from .fields import field_at
from .field_kinds import field_kind_at, fields_of_kind

_CUE = r"(?:\bborn(?:\s+on)?|\bd\.?o\.?b\.?|\bdate\s+of\s+birth|\bbirth\s?date|\bbirthday(?:\s+is)?|\bn[ée]e?(?:\s?\(e\))?\s+le|\bgeb\.(?:\s*-?\s*datum|\s+am)?|\bgeb\.?\s+am|\bdate\s+de\s+naissance|\bgeboren(?:\s+am)?|\bgeburtsdatum|\bfecha\s+de\s+nacimiento|\bnacid[oa]\s+el|\bf\.\s*nacimiento|\bfecha\s+nacimiento|\bdata\s+di\s+nascita|\bnato\s+il|\bnata\s+il|\bgeboortedatum|\bgeboren\s+op)"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|januar|februar|märz|maerz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari|februari|maart|mei|augustus"
_DATE = rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}[./\-]\d{{1,2}}[./\-](?:\d{{4}}|\d{{2}})|\d{{1,2}}\.?\s+(?:de\s+)?(?:{_MONTHS})\.?,?\s+(?:de\s+)?\d{{4}}|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})"
_DOB = jsregex.compile(rf"{_CUE}\s*(?:[:\-–]|is|was|on|am|le|el|il)?\s*({_DATE})(?![\p{{L}}\p{{N}}])", "giu")
_DATE_ALONE = jsregex.compile(rf"(?<![\p{{L}}\p{{N}}]){_DATE}(?![\p{{L}}\p{{N}}])", "iu")
_NUMBERS = jsregex.compile(r"\d+", "g")


def _plausible(date: str) -> bool:
    numbers = [int(n) for n in _NUMBERS.findall(date)]
    year = next((n for n in numbers if n > 31), numbers[-1] if numbers else None)
    return year is not None and (year < 100 or 1900 <= year <= 2100)


def _labelled_dates(text: str) -> list[Span]:
    out: list[Span] = []
    for f in fields_of_kind(text, "dob"):
        m = _DATE_ALONE.search(text[f.start:f.end])
        if m is not None and _plausible(m.group(0)):
            out.append(Span(f.start + m.start(), f.start + m.end(), "DATE_OF_BIRTH"))
    return out


def _detect(text: str) -> list[Span]:
    def accept(m):
        date = m.group(1)
        if not _plausible(date):
            return None
        start, end = m.end() - len(date), m.end()
        # A cue at the end of one line does not reach into a table cell or field of another kind below it.
        if "\n" in m.group(0) and field_at(text, start, end) is not None and field_kind_at(text, start, end) != "dob":
            return None
        return (start, end)

    return spans_from_regex(text, _DOB, "DATE_OF_BIRTH", accept) + _labelled_dates(text)


date_of_birth_detector = Detector("DATE_OF_BIRTH", _detect)
