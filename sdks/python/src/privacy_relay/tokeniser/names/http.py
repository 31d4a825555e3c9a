"""HTTP name model. Contract (docs/tokeniser.md): POST <url> {"text": "..."} -> 200 {"entities": [{"start", "end",
"type": "PERSON"}, ...]}. Any network error, timeout, non-2xx status or malformed body is NameModelUnavailable."""

from __future__ import annotations

import httpx

from ..types import Span
from . import NameModelUnavailable


class HttpNameModel:
    def __init__(self, url: str, *, timeout: float = 5.0, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self._timeout = timeout
        self._headers = headers or {}

    def detect(self, text: str) -> list[Span]:
        try:
            response = httpx.post(self.url, json={"text": text}, headers={"accept": "application/json", **self._headers}, timeout=self._timeout)
        except httpx.HTTPError as error:
            raise NameModelUnavailable(f"name model endpoint unreachable: {self.url}") from error
        if not 200 <= response.status_code < 300:
            raise NameModelUnavailable(f"name model endpoint answered HTTP {response.status_code}: {self.url}")
        try:
            payload = response.json()
        except ValueError as error:
            raise NameModelUnavailable("name model endpoint answered a body that is not JSON") from error
        entities = payload.get("entities") if isinstance(payload, dict) else None
        if not isinstance(entities, list):
            raise NameModelUnavailable('name model endpoint answered without an "entities" array')
        spans: list[Span] = []
        for e in entities:
            e = e if isinstance(e, dict) else {}
            start, end, type_ = e.get("start"), e.get("end"), e.get("type")
            if not isinstance(start, int) or isinstance(start, bool) or not isinstance(end, int) or isinstance(end, bool) or not isinstance(type_, str):
                raise NameModelUnavailable("name model endpoint answered a malformed entity")
            if start < 0 or end > len(text) or end <= start:
                raise NameModelUnavailable("name model endpoint answered an entity outside the text")
            if type_.upper() == "PERSON":
                spans.append(Span(start, end, "PERSON"))
        return spans
