"""UK National Insurance numbers by HMRC's rules (letters, never-issued prefixes, suffix A-D, spacing)."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex
from .context import follows_non_personal_label

_NINO = jsregex.compile(r"(?<![\p{L}\p{N}])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?![\p{L}\p{N}])", "gu")
_NEVER_ISSUED = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}
_BLOCK = jsregex.compile(r" \d{6} [A-D]$")
_CAPITALS = jsregex.compile(r"[A-Z]", "g")


def _accept(text: str, m):
    # A serial, part or order number shaped like a NINO ("serial ZM452778C") is a reference.
    if m.group(1) in _NEVER_ISSUED or follows_non_personal_label(text, m.start()):
        return None
    spaced = len(_CAPITALS.sub("", m.group(0)).split(" "))
    if spaced != 1 and spaced != 5 and not _BLOCK.search(m.group(0)):
        return None
    return (m.start(), m.end())


uk_nino_detector = Detector("UK_NINO", lambda text: spans_from_regex(text, _NINO, "UK_NINO", lambda m: _accept(text, m)))
