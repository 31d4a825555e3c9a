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


def _matches(window: str, region: str, max_tries: int = 65535):
    """The matcher's candidates; the callers keep only valid numbers. libphonenumber-js's `valid` leniency (the
    TypeScript engine's) is exactly that, while phonenumbers' VALID also demands a national prefix where the plan
    requires one when formatting ("531 744 849" under a "Tel." label is a Dutch number written without its 0)."""
    return PhoneNumberMatcher(window, region, leniency=Leniency.POSSIBLE, max_tries=max_tries)


# Long runs of digit groups ("12 12 12 ..."), as in the TypeScript engine (detectors/phone.ts, where the reasons
# are written out): the matcher's cost per window grows faster than its length, so a run longer than _PIECE_CHARS
# is read as overlapping pieces of at most _PIECE_CHARS characters and _PIECE_GROUPS groups, cut at group
# boundaries and starting at most _PIECE_STEP apart; a piece of digits and spaces only, with more than 24 digits
# and no group of 7, cannot give a phone and is not parsed; the other pieces get a bounded number of tries; and
# the matches of a window already parsed in this text are reused.
_PIECE_CHARS = 64
_PIECE_STEP = 32
_PIECE_GROUPS = 21
_PIECE_TRIES = _PIECE_GROUPS + 4
_MIXED_PIECE_TRIES = 8
_DIGITS_AND_SPACES = jsregex.compile(r"^[\d ]+$")
_SEVEN_DIGITS = jsregex.compile(r"\d{7}")


def _cannot_hold_phone(piece: str) -> bool:
    return _DIGITS_AND_SPACES.search(piece) is not None and len(_digits(piece)) > 24 and _SEVEN_DIGITS.search(piece) is None


def _tries_for(piece: str) -> int:
    return _PIECE_TRIES if _DIGITS_AND_SPACES.search(piece) is not None else _MIXED_PIECE_TRIES


def _pieces_of(segment: str) -> list[tuple[int, int]]:
    """[start, end) ranges of `segment` to read: the segment itself, or overlapping pieces of a long one."""
    if len(segment) <= _PIECE_CHARS:
        return [(0, len(segment))]
    group_starts: list[int] = []
    group_ends: list[int] = []
    n = len(segment)
    for i, c in enumerate(segment):
        digit = "0" <= c <= "9"
        if digit and (i == 0 or not ("0" <= segment[i - 1] <= "9")):
            group_starts.append(i - 1 if i > 0 and segment[i - 1] in "+(" else i)
        if digit and (i == n - 1 or not ("0" <= segment[i + 1] <= "9")):
            group_ends.append(i + 1)
    pieces: list[tuple[int, int]] = []
    g = e = start = 0
    while True:
        while e < len(group_ends) - 1 and group_ends[e + 1] - start <= _PIECE_CHARS and e + 1 - g < _PIECE_GROUPS:
            e += 1
        end = group_ends[e] if start < group_ends[e] <= start + _PIECE_CHARS else min(n, start + _PIECE_CHARS)
        pieces.append((start, end))
        if end >= n:
            break
        while g < len(group_starts) - 1 and group_starts[g + 1] <= start + _PIECE_STEP:
            g += 1
        start = group_starts[g] if group_starts[g] > start else start + _PIECE_STEP
    return pieces


def _unbalanced(s: str) -> int:
    return s.count("(") - s.count(")")


def make_phone_detector(regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> Detector:
    regions = tuple(regions)

    def detect(text: str) -> list[Span]:
        found: list[Span] = []
        scanned = _without_empty_brackets(text)
        memo: dict[tuple[str, bool, str], list] = {}
        for whole in _DIGIT_SEGMENT.finditer(scanned):
            whole_text = whole.group(0)
            long_run = len(whole_text) > _PIECE_CHARS
            for piece_start, piece_end in _pieces_of(whole_text):
                seg = whole_text[piece_start:piece_end]
                seg_start = whole.start() + piece_start
                if len(_digits(seg)) < 7:
                    continue
                if long_run and _cannot_hold_phone(seg):
                    continue
                origin = max(0, seg_start - 8) if piece_start == 0 else seg_start
                to = seg_start + len(seg) + 8 if piece_end == len(whole_text) else seg_start + len(seg)
                window = scanned[origin:to]
                international = seg.startswith("+") and seg.find("+", 1) == -1
                for region in regions[:1] if international else regions:
                    key = (region, long_run, window)
                    hits = memo.get(key)
                    if hits is None:
                        hits = list(_matches(window, region, _tries_for(window)) if long_run else _matches(window, region))
                        memo[key] = hits
                    for hit in hits:
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
