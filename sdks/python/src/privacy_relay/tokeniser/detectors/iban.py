"""IBANs: country code, check digits, the BBAN contiguous or in printed groups of four, validated like the
TypeScript engine's validator (ibantools: country length and BBAN format, the national BBAN checks, mod 97).
The country table is data/iban_countries.json, generated from ibantools by tools/generate-data.ts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Optional

import regex

from .. import jsregex
from ..types import Span
from . import Detector

_COUNTRIES: dict = json.loads((Path(__file__).resolve().parent.parent / "data" / "iban_countries.json").read_text("utf-8"))["countries"]
_IBAN_CANDIDATE = jsregex.compile(r"(?<![\p{L}\p{N}])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){3,9}(?![\p{L}\p{N}])", "gu")
# Every candidate starts with two ASCII letters and two digits: a text without them has none (a cheap first look).
_COUNTRY_AND_CHECK = re.compile(r"[A-Za-z]{2}[0-9]{2}")
_GROUPED = jsregex.compile(r"^(?:\S+|\S{4}(?: \S{4})*(?: \S{1,4})?)$")
_SPACES_DOTS = regex.compile(r"[\s.]+")


def electronic_format(iban: str) -> str:
    return iban.replace("-", "").replace(" ", "").upper()


def _int(s: str) -> int:
    return int(s) if s.isdigit() else -1


def _mod9710(s: str) -> int:
    while len(s) > 2:
        part = s[:6]
        if not part.isdigit():
            return -1
        s = str(int(part) % 97) + s[len(part):]
    return int(s) % 97 if s.isdigit() else -1


def _check_norway(bban: str) -> bool:
    b = _SPACES_DOTS.sub("", bban)
    weights = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2]
    total = sum(_int(b[i]) * weights[i] for i in range(10))
    remainder = total % 11
    return _int(b[10]) == (0 if remainder == 0 else 11 - remainder)


def _check_belgian(bban: str) -> bool:
    b = _SPACES_DOTS.sub("", bban)
    checking = int(b[:-2])
    remainder = 97 if checking % 97 == 0 else checking % 97
    return remainder == int(b[-2:])


def _check_mod9710(bban: str) -> bool:
    return _mod9710(_SPACES_DOTS.sub("", bban)) == 1


def _check_poland(bban: str) -> bool:
    weights = [3, 9, 7, 1, 3, 9, 7]
    total = sum(_int(bban[i]) * weights[i] for i in range(7))
    remainder = total % 10
    return _int(bban[7]) == (0 if remainder == 0 else 10 - remainder)


def _mod11_control(remainder: int) -> int:
    return 0 if remainder == 0 else 1 if remainder == 1 else 11 - remainder


def _check_spain(bban: str) -> bool:
    wb = [4, 8, 5, 10, 9, 7, 3, 6]
    wa = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6]
    if _int(bban[8]) != _mod11_control(sum(_int(bban[i]) * wb[i] for i in range(8)) % 11):
        return False
    account = bban[10:20]
    return _int(bban[9]) == _mod11_control(sum(_int(account[i]) * wa[i] for i in range(10)) % 11)


def _mod1110(to_check: str, control: int) -> bool:
    nr = 10
    for ch in to_check:
        nr += _int(ch)
        if nr % 10 != 0:
            nr = nr % 10
        nr = nr * 2 % 11
    return control == (0 if 11 - nr == 10 else 11 - nr)


def _check_croatian(bban: str) -> bool:
    return _mod1110(bban[0:6], _int(bban[6])) and _mod1110(bban[7:16], _int(bban[16]))


def _check_czech_slovak(bban: str) -> bool:
    wp = [10, 5, 8, 4, 2, 1]
    ws = [6, 3, 7, 9, 10, 5, 8, 4, 2, 1]
    prefix, suffix = bban[4:9], bban[10:19]
    if _int(bban[9]) != _mod11_control(sum(_int(c) * wp[i] for i, c in enumerate(prefix)) % 11):
        return False
    return _int(bban[19]) == _mod11_control(sum(_int(c) * ws[i] for i, c in enumerate(suffix)) % 11)


def _check_estonian(bban: str) -> bool:
    weights = [7, 1, 3, 7, 1, 3, 7, 1, 3, 7, 1, 3, 7]
    remainder = sum(_int(c) * weights[i] for i, c in enumerate(bban[2:15])) % 10
    return _int(bban[15]) == (0 if remainder == 0 else 10 - remainder)


_FRENCH = {c: str(d) for d, letters in enumerate(["", "AJ", "BKS", "CLT", "DMU", "ENV", "FOW", "GPX", "HQY", "IRZ"]) for c in letters}


def _check_french(bban: str) -> bool:
    b = _SPACES_DOTS.sub("", bban)
    return _mod9710("".join(_FRENCH.get(c, c) if ord(c) >= 65 else c for c in b)) == 0


def _check_hungarian(bban: str) -> bool:
    weights = [9, 7, 3, 1, 9, 7, 3, 1, 9, 7, 3, 1, 9, 7, 3]
    remainder = sum(_int(c) * weights[i] for i, c in enumerate(bban[0:7])) % 10
    if _int(bban[7]) != (0 if remainder == 0 else 10 - remainder):
        return False
    if bban.endswith("00000000"):
        account, control = bban[8:15], _int(bban[15:16] or "x")
    else:
        account, control = bban[8:23], _int(bban[23:24] or "x")
    remainder = sum(_int(c) * weights[i] for i, c in enumerate(account)) % 10
    return control == (0 if remainder == 0 else 10 - remainder)


_BBAN_CHECKS: dict[str, Callable[[str], bool]] = {
    "checkNorwayBBAN": _check_norway,
    "checkBelgianBBAN": _check_belgian,
    "checkMod9710BBAN": _check_mod9710,
    "checkPolandBBAN": _check_poland,
    "checkSpainBBAN": _check_spain,
    "checkCroatianBBAN": _check_croatian,
    "checkCzechAndSlovakBBAN": _check_czech_slovak,
    "checkEstonianBBAN": _check_estonian,
    "checkFrenchBBAN": _check_french,
    "checkHungarianBBAN": _check_hungarian,
}
_BBAN_FORMATS: dict[str, "regex.Pattern[str]"] = {}


def _checksum_ok(iban: str) -> bool:
    digits = "".join(str(ord(c) - 55) if ord(c) >= 65 else c for c in f"{iban[4:]}{iban[:2]}00")
    rest = _mod9710(digits)
    return rest >= 0 and iban[2:4].isdigit() and 98 - rest == int(iban[2:4])


def is_valid_iban(iban: str) -> bool:
    """ISO 13616 in electronic format: the country's length and BBAN format, its national check, mod 97."""
    spec = _COUNTRIES.get(iban[:2])
    if spec is None or spec["chars"] != len(iban) or not regex.fullmatch(r"[0-9]{2}", iban[2:4]):
        return False
    bban = iban[4:]
    fmt = _BBAN_FORMATS.get(iban[:2])
    if fmt is None:
        fmt = _BBAN_FORMATS[iban[:2]] = jsregex.compile(spec["bban_regexp"])
    if not fmt.search(bban):
        return False
    check = spec["bban_check"]
    try:
        if check is not None and not _BBAN_CHECKS[check](_SPACES_DOTS.sub("", bban)):
            return False
    except (ValueError, IndexError):
        return False
    return _checksum_ok(iban)


def _detect(text: str) -> list[Span]:
    spans: list[Span] = []
    if not _COUNTRY_AND_CHECK.search(text):
        return spans
    pos = 0
    while True:
        m = _IBAN_CANDIDATE.search(text, pos)
        if m is None:
            return spans
        start = m.start()
        candidate = m.group(0)
        found: Optional[Span] = None
        while len(candidate) >= 15:
            if is_valid_iban(electronic_format(candidate)):
                found = Span(start, start + len(candidate), "IBAN")
                spans.append(found)
                break
            cut = candidate.rfind(" ")
            if cut <= 4:
                break
            candidate = candidate[:cut]
        # Resume right after what was taken (or the next character), so an IBAN right after another is not lost.
        pos = found.end if found is not None else start + 1


def rejected_iban_runs(text: str) -> list[tuple[int, int]]:
    """Runs shaped exactly like an IBAN of a known country that fail its check: not IBANs, but their digit groups
    are not phones or cards either, so the caller consumes these ranges."""
    runs: list[tuple[int, int]] = []
    if not _COUNTRY_AND_CHECK.search(text):
        return runs
    for m in _IBAN_CANDIDATE.finditer(text):
        spec = _COUNTRIES.get(m.group(0)[:2].upper())
        length = None if spec is None else spec["chars"]
        candidate = m.group(0)
        while True:
            electronic = electronic_format(candidate)
            if length is not None and len(electronic) == length and _GROUPED.search(candidate):
                if not is_valid_iban(electronic):
                    runs.append((m.start(), m.start() + len(candidate)))
                break
            cut = candidate.rfind(" ")
            if cut <= 4:
                break
            candidate = candidate[:cut]
    return runs


iban_detector = Detector("IBAN", _detect)
