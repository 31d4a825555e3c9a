"""Deterministic, validated detectors: each finds candidates by shape and keeps only those that validate."""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional

import regex

from ..types import Span


class Detector(NamedTuple):
    type: str
    detect: Callable[[str], list[Span]]


def spans_from_regex(
    text: str, pattern: "regex.Pattern[str]", type_: str, accept: Callable[["regex.Match[str]"], Optional[tuple[int, int]]]
) -> list[Span]:
    spans: list[Span] = []
    for m in pattern.finditer(text):
        if m.end() == m.start():
            continue
        accepted = accept(m)
        if accepted is not None:
            spans.append(Span(accepted[0], accepted[1], type_))
    return spans
