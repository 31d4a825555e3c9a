"""Payment card numbers: issuer ranges and lengths of the schemes recognised, Luhn, printed as digit groups joined
by one kind of separator; never carved out of the inside of a longer number."""

from __future__ import annotations

from typing import NamedTuple, Optional

from .. import jsregex
from ..types import Span
from . import Detector
from .context import follows_non_personal_label, is_delimited
from .field_kinds import whole_value_kind_at
from .luhn import passes_luhn


def _prefix_in(d: str, width: int, low: int, high: int) -> bool:
    head = d[:width]
    return head.isdigit() and low <= int(head) <= high


_SCHEMES = [
    ("visa", lambda d: d.startswith("4"), (13, 16, 19)),
    ("mastercard", lambda d: _prefix_in(d, 2, 51, 55) or _prefix_in(d, 4, 2221, 2720), (16,)),
    ("amex", lambda d: d.startswith("34") or d.startswith("37"), (15,)),
    ("discover", lambda d: d.startswith("6011") or d.startswith("65") or _prefix_in(d, 3, 644, 649), tuple(range(16, 20))),
    ("jcb", lambda d: _prefix_in(d, 4, 3528, 3589), tuple(range(16, 20))),
    ("diners", lambda d: d.startswith("36") or _prefix_in(d, 3, 300, 305), tuple(range(14, 20))),
    ("unionpay", lambda d: d.startswith("62"), tuple(range(16, 20))),
]
_CARD_DIGITS = jsregex.compile(r"^\d{13,19}$")
_CARD_CANDIDATE = jsregex.compile(r"(?<![\d\-+])\d+(?:(?: \d+)+|(?:-\d+)+)?(?![\d]|-\d)", "g")
_DIGIT_RUN = jsregex.compile(r"\d+", "g")


def card_scheme(digits: str) -> Optional[str]:
    return next((name for name, matches, lengths in _SCHEMES if matches(digits) and len(digits) in lengths), None)


def is_valid_card_number(digits: str) -> bool:
    return bool(_CARD_DIGITS.search(digits)) and card_scheme(digits) is not None and passes_luhn(digits)


class _Group(NamedTuple):
    start: int
    end: int
    text: str


def _cards_in(text: str, groups: list[_Group]) -> list[Span]:
    for size in range(len(groups), 0, -1):
        for i in range(0, len(groups) - size + 1):
            chosen = groups[i:i + size]
            if size > 1 and any(len(g.text) < 2 or len(g.text) > 8 for g in chosen):
                continue
            if not is_valid_card_number("".join(g.text for g in chosen)):
                continue
            start, end = chosen[0].start, chosen[-1].end
            if not is_delimited(text, start, end) or follows_non_personal_label(text, start):
                continue
            if whole_value_kind_at(text, start, end) == "reference":
                continue
            return [*_cards_in(text, groups[:i]), Span(start, end, "CARD"), *_cards_in(text, groups[i + size:])]
    return []


def _detect(text: str) -> list[Span]:
    out: list[Span] = []
    for m in _CARD_CANDIDATE.finditer(text):
        groups = [_Group(m.start() + g.start(), m.start() + g.end(), g.group(0)) for g in _DIGIT_RUN.finditer(m.group(0))]
        out.extend(_cards_in(text, groups))
    return out


card_detector = Detector("CARD", _detect)
