"""UK National Insurance numbers by HMRC's rules (letters, never-issued prefixes, suffix A-D, spacing)."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex

_NINO = jsregex.compile(r"(?<![\p{L}\p{N}])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?![\p{L}\p{N}])", "gu")
_NEVER_ISSUED = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}
_BLOCK = jsregex.compile(r" \d{6} [A-D]$")
_CAPITALS = jsregex.compile(r"[A-Z]", "g")


def _accept(m):
    if m.group(1) in _NEVER_ISSUED:
        return None
    spaced = len(_CAPITALS.sub("", m.group(0)).split(" "))
    if spaced != 1 and spaced != 5 and not _BLOCK.search(m.group(0)):
        return None
    return (m.start(), m.end())


uk_nino_detector = Detector("UK_NINO", lambda text: spans_from_regex(text, _NINO, "UK_NINO", _accept))
