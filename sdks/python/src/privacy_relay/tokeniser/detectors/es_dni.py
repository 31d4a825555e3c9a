"""Spanish DNI (8 digits + letter) and NIE (X/Y/Z + 7 digits + letter), letter = table[n mod 23]."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex
from .context import follows_non_personal_label

_CHECK_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_SHAPE = jsregex.compile(r"^([XYZ]|\d)(\d{7})([A-Z])$")
_DNI = jsregex.compile(r"(?<![\p{L}\p{N}])(?:[XYZxyz][\- ]?\d{7}|\d{8})[\- ]?[A-Za-z](?![\p{L}\p{N}])", "gu")


def is_valid_es_dni(value: str) -> bool:
    v = "".join(c for c in value.upper() if not c.isspace() and c != "-")
    m = _SHAPE.search(v)
    if m is None:
        return False
    lead = {"X": "0", "Y": "1", "Z": "2"}.get(m.group(1), m.group(1))
    return _CHECK_LETTERS[int(lead + m.group(2)) % 23] == m.group(3)


_SEVEN_DIGITS = jsregex.compile(r"\d{7}")


def _detect(text: str):
    # Both forms hold seven digits in a row: a text without such a run has none (a cheap first look).
    if not _SEVEN_DIGITS.search(text):
        return []
    return spans_from_regex(text, _DNI, "ES_DNI", lambda m: (m.start(), m.end()) if is_valid_es_dni(m.group(0)) and not follows_non_personal_label(text, m.start()) else None)


es_dni_detector = Detector("ES_DNI", _detect)
