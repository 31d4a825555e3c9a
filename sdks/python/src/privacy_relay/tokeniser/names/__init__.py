"""Name models: the built-in gazetteer and rule model, an HTTP model, or none."""

from __future__ import annotations

from typing import Protocol

from ..types import Span


class NameModelUnavailable(Exception):
    """Names were enabled but the model could not answer: nothing may be sent."""


class NameModel(Protocol):
    def detect(self, text: str) -> list[Span]:
        """PERSON spans in `text`; raises NameModelUnavailable (or anything) when it cannot answer."""
        ...
