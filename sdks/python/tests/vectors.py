"""The cross-language vectors (sdks/vectors), read from the repository: never copied."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

VECTORS_DIR = Path(__file__).resolve().parents[2] / "vectors"


@lru_cache(maxsize=None)
def load(name: str) -> Any:
    return json.loads((VECTORS_DIR / f"{name}.json").read_text("utf-8"))


def ids(cases: list[dict], key: str = "name") -> list[str]:
    return [str(c.get(key, i)) for i, c in enumerate(cases)]
