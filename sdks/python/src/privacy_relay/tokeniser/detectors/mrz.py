"""The machine-readable zone of a passport, visa or identity card (ICAO Doc 9303), whole (detectors/mrz.ts)."""

from __future__ import annotations

import re

from .. import jsregex
from . import Detector, spans_from_regex

# Two lines of 44 (TD3, passports), two of 36 (TD2) or three of 30 (TD1, cards), in A-Z, 0-9 and "<", separated by
# a line break (spaces around it) or nothing. Accepted when the composite check digit holds, or two of the three
# field checks (document number, birth date, expiry) do: one misread character breaks its field and the composite.
_SEP = r"[ \t]*(?:\r?\n[ \t]*)?"
_TD3 = jsregex.compile(r"(?<![A-Z0-9<])(P[A-Z0-9<]{43})" + _SEP + r"([A-Z0-9<]{44})(?![A-Z0-9<])", "g")
_TD2 = jsregex.compile(r"(?<![A-Z0-9<])([PIACV][A-Z0-9<]{35})" + _SEP + r"([A-Z0-9<]{36})(?![A-Z0-9<])", "g")
_TD1 = jsregex.compile(r"(?<![A-Z0-9<])([IACV][A-Z0-9<]{29})" + _SEP + r"([A-Z0-9<]{30})" + _SEP + r"([A-Z0-9<]{30})(?![A-Z0-9<])", "g")
_FILLERS = re.compile(r"<*")
_WEIGHTS = (7, 3, 1)


def mrz_check_digit(field: str) -> int:
    """ICAO 9303 check digit: digits are their value, A-Z 10-35, "<" 0, weighted 7-3-1, modulo 10."""
    total = 0
    for i, ch in enumerate(field):
        value = 0 if ch == "<" else ord(ch) - 48 if ch <= "9" else ord(ch) - 55
        total += value * _WEIGHTS[i % 3]
    return total % 10


def _checks(field: str, check: str) -> bool:
    if check == "<":
        return _FILLERS.fullmatch(field) is not None
    return check.isdigit() and int(check) == mrz_check_digit(field)


def _enough_hold(number: bool, birth: bool, expiry: bool, composite: bool) -> bool:
    return composite or sum((number, birth, expiry)) >= 2


def _two_line_second_valid(line: str) -> bool:
    n = len(line)
    composite = line[0:10] + line[13:20] + line[21 : n - 1]
    return _enough_hold(
        _checks(line[0:9], line[9]), _checks(line[13:19], line[19]), _checks(line[21:27], line[27]), _checks(composite, line[n - 1])
    )


def _td1_valid(first: str, second: str) -> bool:
    return _enough_hold(
        _checks(first[5:14], first[14]),
        _checks(second[0:6], second[6]),
        _checks(second[8:14], second[14]),
        _checks(first[5:30] + second[0:7] + second[8:15] + second[18:29], second[29]),
    )


def _detect(text: str):
    return (
        spans_from_regex(text, _TD3, "MRZ", lambda m: (m.start(), m.end()) if _two_line_second_valid(m.group(2)) else None)
        + spans_from_regex(text, _TD2, "MRZ", lambda m: (m.start(), m.end()) if _two_line_second_valid(m.group(2)) else None)
        + spans_from_regex(text, _TD1, "MRZ", lambda m: (m.start(), m.end()) if _td1_valid(m.group(1), m.group(2)) else None)
    )


mrz_detector = Detector("MRZ", _detect)
