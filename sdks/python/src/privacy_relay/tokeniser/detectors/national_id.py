"""National identifiers of EU/EEA countries without a type of their own, each validated by its published check
rule. Distinctive printed layouts are taken anywhere; bare digit forms only after a cue naming them or in a field
labelled so, since one random number in ten or so passes their checks."""

from __future__ import annotations

from typing import Callable, NamedTuple

from .. import jsregex
from ..types import Span
from . import Detector
from .context import digits_only, text_before
from .field_kinds import field_kind_at, mentions
from .luhn import passes_luhn


class _Scheme(NamedTuple):
    kind: str
    pattern: object
    valid: Callable[[str], bool]
    stands_alone: Callable[[str], bool]
    #: The longest run of consecutive digits any match must contain: schemes needing more than the text has are
    #: not scanned (a cheap first look, same result).
    min_digit_run: int = 1


def _is_date(yy: int, mm: int, dd: int) -> bool:
    return 1 <= mm <= 12 and 1 <= dd <= 31 and yy >= 0


def _mod97(numeric: str) -> int:
    r = 0
    for c in numeric:
        r = (r * 10 + int(c)) % 97
    return r


def _valid_ahv(value: str) -> bool:
    d = digits_only(value)
    if len(d) != 13 or not d.startswith("756"):
        return False
    total = sum(int(d[i]) * (1 if i % 2 == 0 else 3) for i in range(12))
    return (10 - total % 10) % 10 == int(d[12])


def _valid_belgian(value: str) -> bool:
    d = digits_only(value)
    if len(d) != 11:
        return False
    month = int(d[2:4]) % 20
    if month > 12 or int(d[4:6]) > 31:
        return False
    check = int(d[9:])
    return 97 - _mod97(d[:9]) == check or 97 - _mod97("2" + d[:9]) == check


_PPSN = jsregex.compile(r"^(\d{7})([A-W])([A-IW]?)$", "i")


def _valid_ppsn(value: str) -> bool:
    m = _PPSN.search(value.upper())
    if m is None:
        return False
    total = sum(int(m.group(1)[i]) * (8 - i) for i in range(7))
    if m.group(3) != "":
        total += (0 if m.group(3) == "W" else ord(m.group(3)) - 64) * 9
    return "WABCDEFGHIJKLMNOPQRSTUV"[total % 23] == m.group(2)


def _valid_steuer_id(value: str) -> bool:
    d = digits_only(value)
    if len(d) != 11 or d[0] == "0":
        return False
    counts: dict[str, int] = {}
    for c in d[:10]:
        counts[c] = counts.get(c, 0) + 1
    repeated = [n for n in counts.values() if n > 1]
    if len(repeated) != 1 or repeated[0] > 3:
        return False
    product = 10
    for c in d[:10]:
        total = (int(c) + product) % 10
        if total == 0:
            total = 10
        product = total * 2 % 11
    return (11 - product) % 10 == int(d[10])


_CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]


def _cf_index(c: str) -> int:
    return int(c) if "0" <= c <= "9" else ord(c) - 55


def _valid_codice_fiscale(value: str) -> bool:
    v = value.upper()
    total = 0
    for i in range(15):
        if i % 2 == 0:
            total += _CF_ODD[_cf_index(v[i])]
        else:
            total += int(v[i]) if "0" <= v[i] <= "9" else ord(v[i]) - 65
    return chr(65 + total % 26) == v[15]


def _valid_pesel(value: str) -> bool:
    if len(value) != 11 or not all("0" <= c <= "9" for c in value):
        return False
    if not _is_date(0, int(value[2:4]) % 20, int(value[4:6])):
        return False
    w = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3]
    total = sum(int(value[i]) * w[i] for i in range(10))
    return (10 - total % 10) % 10 == int(value[10])


def _valid_personnummer(value: str) -> bool:
    d = digits_only(value)
    ten = d[2:] if len(d) == 12 else d
    return len(ten) == 10 and _is_date(0, int(ten[2:4]), int(ten[4:6]) % 60) and passes_luhn(ten)


def _valid_cpr(value: str) -> bool:
    d = digits_only(value)
    return len(d) == 10 and _is_date(0, int(d[2:4]), int(d[0:2]))


_HETU = jsregex.compile(r"^(\d{6})[-+A-FU-Y](\d{3})([0-9A-Y])$")


def _valid_hetu(value: str) -> bool:
    m = _HETU.search(value.upper())
    if m is None or not _is_date(0, int(m.group(1)[2:4]), int(m.group(1)[0:2])):
        return False
    return "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(m.group(1) + m.group(2)) % 31] == m.group(3)


_SCHEMES = [
    _Scheme("ahv", jsregex.compile(r"(?<![\p{L}\p{N}.])756([. ]?)\d{4}\1\d{4}\1\d{2}(?![\p{L}\p{N}]|[.]\d)", "gu"), _valid_ahv, lambda v: "." in v, 3),
    _Scheme(
        "beNationalNumber",
        jsregex.compile(r"(?<![\p{L}\p{N}.])\d{2}(?:\.\d{2}\.\d{2}-\d{3}\.\d{2}|\d{9})(?![\p{L}\p{N}]|[.\-]\d)", "gu"),
        _valid_belgian,
        lambda v: "-" in v,
    ),
    _Scheme("ppsn", jsregex.compile(r"(?<![\p{L}\p{N}])\d{7}[A-W][A-IW]?(?![\p{L}\p{N}])", "giu"), _valid_ppsn, lambda v: False, 7),
    _Scheme("steuerId", jsregex.compile(r"(?<![\p{L}\p{N}])[1-9]\d(?: ?\d{3}){3}(?![\p{L}\p{N}])", "gu"), _valid_steuer_id, lambda v: False, 2),
    _Scheme(
        "codiceFiscale",
        jsregex.compile(r"(?<![\p{L}\p{N}])[A-Z]{6}\d{2}[A-EHLMPRST]\d{2}[A-Z]\d{3}[A-Z](?![\p{L}\p{N}])", "giu"),
        _valid_codice_fiscale,
        lambda v: v == v.upper(),
    ),
    _Scheme("pesel", jsregex.compile(r"(?<![\p{L}\p{N}])\d{11}(?![\p{L}\p{N}])", "gu"), _valid_pesel, lambda v: False, 11),
    _Scheme("personnummer", jsregex.compile(r"(?<![\p{L}\p{N}])(?:\d{2})?\d{6}[-+]?\d{4}(?![\p{L}\p{N}])", "gu"), _valid_personnummer, lambda v: False, 6),
    _Scheme("cpr", jsregex.compile(r"(?<![\p{L}\p{N}])\d{6}-?\d{4}(?![\p{L}\p{N}])", "gu"), _valid_cpr, lambda v: False, 6),
    _Scheme("hetu", jsregex.compile(r"(?<![\p{L}\p{N}])\d{6}[-+A-FU-Y]\d{3}[0-9A-Y](?![\p{L}\p{N}])", "gu"), _valid_hetu, lambda v: True, 6),
]


_DIGIT_RUN = jsregex.compile(r"\d+", "g")


def _detect(text: str) -> list[Span]:
    spans: list[Span] = []
    longest = max((len(r) for r in _DIGIT_RUN.findall(text)), default=0)
    for scheme in _SCHEMES:
        if longest < scheme.min_digit_run:
            continue
        for m in scheme.pattern.finditer(text):  # type: ignore[attr-defined]
            start, end = m.start(), m.end()
            try:
                if not scheme.valid(m.group(0)):
                    continue
            except (ValueError, IndexError):
                continue
            if scheme.stands_alone(m.group(0)) or field_kind_at(text, start, end) == scheme.kind or mentions(scheme.kind, text_before(text, start, 32)):
                spans.append(Span(start, end, "NATIONAL_ID"))
    return spans


national_id_detector = Detector("NATIONAL_ID", _detect)
