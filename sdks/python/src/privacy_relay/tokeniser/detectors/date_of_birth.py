"""Dates of birth: a date is personal data here only when introduced as a birth date (a cue or a labelled field);
other dates are left alone. The span is the date itself, not the cue."""

from __future__ import annotations

from .. import jsregex
from ..types import Span
from . import Detector, spans_from_regex
from .context import text_before
from .fields import field_at
from .field_kinds import field_kind_at, fields_of_kind

_CUE = r"(?:\bborn(?:\s+on)?|\bd\.?o\.?b\.?|\bdate\s+of\s+birth|\bbirth\s?date|\bbirthday(?:\s+is)?|\bn[ée]e?(?:\s?\(e\))?\s+le|\bgeb\.(?:\s*-?\s*datum|\s+am)?|\bgeb\.?\s+am|\bdate\s+de\s+naissance|\bgeboren(?:\s+am)?|\bgeburtsdatum|\bfecha\s+de\s+nacimiento|\bnacid[oa]\s+el|\bf\.\s*nacimiento|\bfecha\s+nacimiento|\bnaci[óo]\s+el|\bdata\s+(?:di\s+)?nascita|\bnat[oa]\s+il|\bnacque\s+il|\bgeboortedatum|\bgeboren\s+op)"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|januar|februar|märz|maerz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari|februari|maart|mei|augustus"
# ISO, year-first with slashes, numeric day-month-year (two-digit years too), 14-Mar-1985, day (ordinal, "1er",
# "14th of") month name year, month name day year.
_DATE = rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}}/\d{{1,2}}/\d{{1,2}}|\d{{1,2}}[./\-]\d{{1,2}}[./\-](?:\d{{4}}|\d{{2}})|\d{{1,2}}-(?:{_MONTHS})\.?-(?:\d{{4}}|\d{{2}})|\d{{1,2}}(?:st|nd|rd|th|er)?\.?\s+(?:of\s+|de\s+)?(?:{_MONTHS})\.?,?\s+(?:de\s+)?\d{{4}}|(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})"
_DOB = jsregex.compile(rf"{_CUE}\s*(?:[:\-–]|is|was|on|am|le|el|il)?\s*(?:the\s+)?({_DATE})(?![\p{{L}}\p{{N}}])", "giu")
# The cue after the date: "wurde am 13. August 1989 in Graz geboren", "is op 3 maart 1980 geboren".
_DOB_CUE_AFTER = jsregex.compile(rf"\b(?:am|op)\s+({_DATE})(?:\s+(?:in|te|en|à|a)\s+[\p{{L}}\-]+(?:\s+[\p{{L}}\-]+)?)?\s+(?:geboren|born)\b", "giu")
# What was "born" is not always a person: "Le projet est né le 6 mai 2019", "the company was born on ...".
_NON_PERSON_SUBJECT = jsregex.compile(
    r"\b(?:project|projet|proyecto|progetto|projekt|idea|idée|idee|company|société|entreprise|empresa|azienda|unternehmen|firma|bedrijf|association|asociación|associazione|verein|vereniging|festival|movement|mouvement|movimiento|movimento|bewegung|beweging|brand|marque|marca|marke|merk|product|produit|producto|prodotto|produkt|startup|start-up|band|groupe|group|grupo|gruppo|gruppe|groep|club|journal|magazine|site|website|app|application|service|concept|programme|program|programa|programma|software|logiciel)\s+(?:(?:est|était|a\s+été|was|is|es|fue|è|era|ist|war|wurde)\s+)?$",
    "iu",
)
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
        if not _plausible(date) or _NON_PERSON_SUBJECT.search(text_before(text, m.start(), 40)):
            return None
        start, end = m.end() - len(date), m.end()
        # A cue at the end of one line does not reach into a table cell or field of another kind below it.
        if "\n" in m.group(0) and field_at(text, start, end) is not None and field_kind_at(text, start, end) != "dob":
            return None
        return (start, end)

    def accept_after(m):
        date = m.group(1)
        if not _plausible(date) or "\n" in m.group(0):
            return None
        start = m.start() + m.group(0).index(date, 2)
        return (start, start + len(date))

    return spans_from_regex(text, _DOB, "DATE_OF_BIRTH", accept) + spans_from_regex(text, _DOB_CUE_AFTER, "DATE_OF_BIRTH", accept_after) + _labelled_dates(text)


date_of_birth_detector = Detector("DATE_OF_BIRTH", _detect)
