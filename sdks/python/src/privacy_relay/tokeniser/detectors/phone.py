"""Phone numbers via `phonenumbers` (Python's port of libphonenumber, the library the TypeScript engine uses as
libphonenumber-js): numbers written with "+" or "00" are found whatever the regions; national formats for each
region in `regions`, and only when written like phones (see `_looks_like_national_phone`)."""

from __future__ import annotations

from typing import Sequence

import phonenumbers
from phonenumbers import Leniency, PhoneNumberMatcher, PhoneNumberType

from .. import jsregex
from ..types import Span
from . import Detector
from .context import follows_non_personal_label, is_delimited, text_before
from .field_kinds import field_kind_at, fields_of_kind, whole_value_kind_at

DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "FR", "DE", "ES", "NL", "IE", "BE", "IT", "CH", "AT")
_LABELLED_REGIONS: tuple[str, ...] = DEFAULT_PHONE_REGIONS + (
    "PT", "PL", "SE", "DK", "FI", "NO", "LU", "CZ", "SK", "HU", "RO", "BG", "GR", "HR", "SI", "EE", "LV", "LT", "MT", "CY", "IS", "LI", "CA", "AU",
)

_INTERNATIONAL = jsregex.compile(r"^(?:\+|00[1-9])")
_PHONE_CUE = jsregex.compile(
    r"\b(?:tel|tél|phone|telephone|téléphone|telefon|telefono|teléfono|telefoon|mobile|mobil|mobiel|móvil|cell|cellphone|handy|portable|fax|call|calling|dial|ring|ruf|rufen|appelez|appeler|llama|llámame|llámanos|bel|chiama|chiamami|text|sms|whatsapp|number|numéro|nummer|número|numero|contact|joindre|joignable|erreichbar|anrufen|bereikbaar|contactar|llamar|localizar)\b[^\n\d]{0,20}$",
    "i",
)
_EXTENSION_SUFFIX = jsregex.compile(r"\s*(?:ext\.?|x|#)\s*\d+$", "i")
_NON_DIGITS = jsregex.compile(r"[^\d]+")
_NANP_DOTS = jsregex.compile(r"^\d{3}\.\d{3}\.\d{4}$")
_FR_DOTS = jsregex.compile(r"^0\d(?:\.\d{2}){4}$")
_DUTCH_DASH = jsregex.compile(r"^0\d{1,3}-\d{3,8}(?: \d{2,4})*$")
_LEADING_AREA = jsregex.compile(r"^\(\d+\)\s*")
_DASH_OR_SPACE = jsregex.compile(r"[- ]")
_SSN_LAYOUT = jsregex.compile(r"^\d{3}-\d{2}-\d{4}$")
_BARE = jsregex.compile(r"^\d+$")
_EMPTY_BRACKETS = jsregex.compile(r"[(\[][^\d()[\]\n]*[)\]]", "g")
_CELL_SEPARATORS = jsregex.compile(r"[,;|\t]", "g")
_DIGIT_SEGMENT = jsregex.compile(r"[+(]?\d[\d \u00a0().\-\/]*\d(?:\s*(?:ext\.?|x|#)\s*\d{1,6})?", "gi")
_HEAD_OK = jsregex.compile(r"^(?:\d|\+|\(\+?\d)")
_WRITTEN_EXTENSION = jsregex.compile(r"(?:ext\.?|x|#)\s*\d+$", "i")
_TRUNK_MOBILE = jsregex.compile(r"^0[1-9]\d{8,9}$")
_STARTS_LIKE_PHONE = jsregex.compile(r"^[+(\d]")


def _digits(s: str) -> str:
    return "".join(c for c in s if "0" <= c <= "9")


def _looks_like_national_phone(text: str, start: int, raw: str, labelled_phone: bool, trunk_mobile: bool) -> bool:
    """A national number (no country prefix) is a phone only when written like one."""
    digits = _digits(raw)
    if len(digits) < 9:
        return False
    body = _EXTENSION_SUFFIX.sub("", raw, count=1)
    groups = [g for g in _NON_DIGITS.split(body) if g != ""]
    if any(len(g) < 2 for g in groups[1:]):
        return False
    if "." in body and not _NANP_DOTS.search(body) and not _FR_DOTS.search(body):
        return False
    dutch_dash = _DUTCH_DASH.search(body) is not None and len(digits) == 10
    if "-" in body and not dutch_dash:
        dashed = _DASH_OR_SPACE.split(_LEADING_AREA.sub("", body, count=1))
        if any(len(g) < 2 or len(g) > 4 for g in dashed):
            return False
        if _SSN_LAYOUT.search(body):
            return False
    if _BARE.search(body):
        return labelled_phone or trunk_mobile or _PHONE_CUE.search(text_before(text, start, 40)) is not None
    return True


def _without_empty_brackets(text: str) -> str:
    """Brackets holding no digit blanked out, cell separators turned into line breaks (offsets unchanged)."""
    return _CELL_SEPARATORS.sub("\n", _EMPTY_BRACKETS.sub(lambda g: " " * len(g.group(0)), text))


def _matches(window: str, region: str):
    """The matcher's candidates; the callers keep only valid numbers. libphonenumber-js's `valid` leniency (the
    TypeScript engine's) is exactly that, while phonenumbers' VALID also demands a national prefix where the plan
    requires one when formatting ("531 744 849" under a "Tel." label is a Dutch number written without its 0)."""
    return PhoneNumberMatcher(window, region, leniency=Leniency.POSSIBLE)


def _unbalanced(s: str) -> int:
    return s.count("(") - s.count(")")


def make_phone_detector(regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> Detector:
    regions = tuple(regions)

    def detect(text: str) -> list[Span]:
        found: list[Span] = []
        scanned = _without_empty_brackets(text)
        for segment in _DIGIT_SEGMENT.finditer(scanned):
            seg = segment.group(0)
            if len(_digits(seg)) < 7:
                continue
            origin = max(0, segment.start() - 8)
            window = scanned[origin:segment.end() + 8]
            international = seg.startswith("+") and seg.find("+", 1) == -1
            for region in regions[:1] if international else regions:
                for hit in _matches(window, region):
                    number = hit.number
                    if not phonenumbers.is_valid_number(number):
                        continue
                    start, end = origin + hit.start, origin + hit.end
                    while end - start > 1:
                        head = text[start:end]
                        if not _HEAD_OK.search(head) or (head.startswith("(") and _unbalanced(head) > 0):
                            start += 1
                        else:
                            break
                    while _unbalanced(text[start:end]) < 0 and text[start:end].endswith(")"):
                        end -= 1
                    raw = text[start:end]
                    if not raw.startswith("+") and follows_non_personal_label(text, start):
                        continue
                    if not is_delimited(text, start, end):
                        continue
                    kind = field_kind_at(text, start, end)
                    if whole_value_kind_at(text, start, end) == "reference" and not _INTERNATIONAL.search(raw):
                        continue
                    if number.extension and not _WRITTEN_EXTENSION.search(raw):
                        continue
                    trunk_mobile = _TRUNK_MOBILE.search(raw) is not None and phonenumbers.number_type(number) == PhoneNumberType.MOBILE
                    if not _INTERNATIONAL.search(raw) and not _looks_like_national_phone(text, start, raw, kind == "phone", trunk_mobile):
                        continue
                    found.append(Span(start, end, "PHONE"))
        found.extend(_labelled_phones(text, found))
        seen: set[tuple[int, int]] = set()
        unique: list[Span] = []
        for s in found:
            if (s.start, s.end) not in seen:
                seen.add((s.start, s.end))
                unique.append(s)
        return unique

    return Detector("PHONE", detect)


def _labelled_phones(text: str, found: list[Span]) -> list[Span]:
    """Phones inside phone-labelled fields that the region scan did not find: any EU/EEA layout is accepted."""
    out: list[Span] = []
    for f in fields_of_kind(text, "phone"):
        if any(s.start < f.end and s.end > f.start for s in found):
            continue
        value = _CELL_SEPARATORS.sub("\n", text[f.start:f.end])
        for region in _LABELLED_REGIONS:
            hit = next((h for h in _matches(value, region) if phonenumbers.is_valid_number(h.number)), None)
            if hit is None:
                continue
            start, end = f.start + hit.start, f.start + hit.end
            if is_delimited(text, start, end) and _STARTS_LIKE_PHONE.search(text[start:end]):
                out.append(Span(start, end, "PHONE"))
            break
    return out
