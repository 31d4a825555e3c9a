"""Payment card numbers: issuer ranges and lengths of the schemes recognised, Luhn, printed as digit groups joined
by one kind of separator; never carved out of the inside of a longer number."""

from __future__ import annotations

import bisect

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
_DIGIT_RUN = jsregex.compile(r"\d+", "g")


def card_scheme(digits: str) -> Optional[str]:
    return next((name for name, matches, lengths in _SCHEMES if matches(digits) and len(digits) in lengths), None)


def is_valid_card_number(digits: str) -> bool:
    return bool(_CARD_DIGITS.search(digits)) and card_scheme(digits) is not None and passes_luhn(digits)


class _Group(NamedTuple):
    start: int
    end: int
    text: str


_MAX_GROUPS = 19  # a card has at most 19 digits, and every group at least one


def _cards_in(text: str, groups: list[_Group]) -> list[Span]:
    """The longest contiguous run of groups that is a valid card (the leftmost of the longest), then the same on the
    groups left and right of it: "4111 1111 1111 1111 2" still finds the card, two cards separated by one space are
    both found, and a card is never carved out of the inside of one unseparated number.

    Computed without rescanning: every window of up to 19 groups is judged once, then each range takes the first
    valid window of the largest size inside it (a binary search per size), iteratively. Linear-logarithmic in the
    number of groups; a long run of digit groups cannot stall the engine."""
    n = len(groups)
    # Prefix sums: digits up to group i, and groups that are not printed like card groups (2 to 8 digits).
    digits = [0]
    unprinted = [0]
    for g in groups:
        digits.append(digits[-1] + len(g.text))
        unprinted.append(unprinted[-1] + (len(g.text) < 2 or len(g.text) > 8))
    starts_by_size: dict[int, list[int]] = {}
    for size in range(1, min(n, _MAX_GROUPS) + 1):
        valid: list[int] = []
        for i in range(0, n - size + 1):
            if not 13 <= digits[i + size] - digits[i] <= 19:
                continue
            # Groups must look like card printing (2 to 8 digits each), not a list of separate numbers.
            if size > 1 and unprinted[i + size] - unprinted[i] > 0:
                continue
            # Every scheme's issuer range starts with 2 to 6 (_SCHEMES): skip the join and the checks for any other
            # first digit, which long runs of other numbers ("12 12 12 ...") would otherwise pay millions of times
            # (the TypeScript engine's detectors/card.ts skips them the same way).
            if not "2" <= groups[i].text[0] <= "6":
                continue
            chosen = groups[i:i + size]
            if not is_valid_card_number("".join(g.text for g in chosen)):
                continue
            start, end = chosen[0].start, chosen[-1].end
            if not is_delimited(text, start, end) or follows_non_personal_label(text, start):
                continue
            # Under an order/invoice/id column or key the number is a reference, like after "Order #".
            if whole_value_kind_at(text, start, end) == "reference":
                continue
            valid.append(i)
        if valid:
            starts_by_size[size] = valid
    sizes = sorted(starts_by_size, reverse=True)
    found: list[Span] = []
    stack: list[tuple[int, int] | Span] = [(0, n)]
    while stack:
        item = stack.pop()
        if isinstance(item, Span):
            found.append(item)
            continue
        lo, hi = item
        for size in sizes:
            starts = starts_by_size[size]
            k = bisect.bisect_left(starts, lo)
            if k < len(starts) and starts[k] + size <= hi:
                i = starts[k]
                stack.append((i + size, hi))
                stack.append(Span(groups[i].start, groups[i + size - 1].end, "CARD"))
                stack.append((lo, i))
                break
    return found


def digit_group_runs(text: str) -> list[list[_Group]]:
    """Runs of digit groups joined by ONE kind of separator (single spaces or single dashes), stitched from the
    digit groups in one pass: exactly the runs the TypeScript engine's detectors/digitGroupRuns.ts finds (the
    pattern it replaced is in tests/test_card_runs.py). That pattern kept one backtracking entry per repeated
    group: a few million groups ("12 12 12 ...", a 10 MB prompt) raised MemoryError here."""
    groups = [_Group(g.start(), g.end(), g.group(0)) for g in _DIGIT_RUN.finditer(text)]
    n = len(groups)

    def joined(k: int, separator: str) -> bool:
        """Group k + 1 follows group k after exactly one `separator`."""
        return k + 1 < n and groups[k + 1].start == groups[k].end + 1 and text[groups[k].end] == separator

    runs: list[list[_Group]] = []
    i = 0
    while i < n:
        first = groups[i]
        # Inside a longer token ("-12", "+49 ..."): these digits cannot start a run.
        if first.start > 0 and text[first.start - 1] in "-+":
            i += 1
            continue
        j = i
        for separator in (" ", "-"):
            if joined(i, separator):
                while joined(j, separator):
                    j += 1
                # A space-joined run directly followed by "-<digit>": its last group belongs to the dashed number
                # after it.
                if separator == " " and joined(j, "-"):
                    j -= 1
                break
        runs.append(groups[i : j + 1])
        i = j + 1
    return runs


def _detect(text: str) -> list[Span]:
    out: list[Span] = []
    for groups in digit_group_runs(text):
        # A card has at least 13 digits: most runs of a long text are shorter and need no look.
        if sum(len(g.text) for g in groups) >= 13:
            out.extend(_cards_in(text, groups))
    return out


card_detector = Detector("CARD", _detect)
