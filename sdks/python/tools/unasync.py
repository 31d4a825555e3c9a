"""Writes the sync client (src/privacy_relay/client.py) from the async one (src/privacy_relay/async_client.py), so
the two cannot drift (issue 33 item 5). The method is unasync's (and httpcore's scripts/unasync.py): drop
`async`/`await`, map each async name to its sync twin. A few sentences that must read differently are listed in
EXACT, each checked to occur once, so a changed sentence fails the run instead of slipping through.

    python tools/unasync.py          write client.py
    python tools/unasync.py --check  exit 1 when client.py is not what the async file makes (the test suite runs it)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "privacy_relay"
SOURCE = PACKAGE / "async_client.py"
TARGET = PACKAGE / "client.py"

HEADER = "# Generated from async_client.py by sdks/python/tools/unasync.py: edit that file and regenerate, never this one.\n"

#: (text in the async file, text in the sync file): sentences that are not a name-for-name translation.
EXACT: list[tuple[str, str]] = [
    (
        """This file is the one source of both clients: client.py (RelayClient) is generated from it by
sdks/python/tools/unasync.py (`python tools/unasync.py` writes it, `--check` fails when it differs; the test suite
runs the check), so the sync and async clients cannot drift. Edit this file, then regenerate.""",
        """Generated from async_client.py (AsyncRelayClient) by sdks/python/tools/unasync.py, so the sync and async
clients cannot drift; the test suite fails when this file is not what the generator writes.""",
    ),
    (
        """    RelayClient and AsyncRelayClient have the same settings and surface; AsyncRelayClient's calls are coroutines and
    run the engine's work (detection, aliases, the attestation signature) in a worker thread.""",
        """    RelayClient and AsyncRelayClient have the same settings and surface; AsyncRelayClient's calls are coroutines and
    run the engine's work (detection, aliases, the attestation signature) in a worker thread.""",
    ),
]

#: Applied in order to every line outside the EXACT texts.
SUBS: list[tuple[str, str]] = [
    (r"\basync def\b", "def"),
    (r"\basync with\b", "with"),
    (r"\basync for\b", "for"),
    (r"\bawait ", ""),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\b__aiter__\b", "__iter__"),
    (r"\baclose\b", "close"),
    (r"\baiter_text\b", "iter_text"),
    (r"\bin_worker_thread\b", "in_caller_thread"),
    (r"\basyncio\.Lock\b", "threading.Lock"),
    (r"^import asyncio$", "import threading"),
    # AsyncRelayClient, AsyncRelayStream, AsyncTransport, AsyncIterator, httpx.AsyncClient, AsyncOpenAI, ...
    (r"\bAsync([A-Z]\w*)", r"\1"),
]
_COMPILED = [(re.compile(pattern), replacement) for pattern, replacement in SUBS]


def unasync(source: str) -> str:
    held: list[str] = []
    for async_text, sync_text in EXACT:
        if source.count(async_text) != 1:
            raise SystemExit(f"tools/unasync.py: EXACT text not found once in async_client.py (it changed?): {async_text[:70]!r}...")
        source = source.replace(async_text, f"\0{len(held)}\0")
        held.append(sync_text)
    lines = []
    for line in source.split("\n"):
        for pattern, replacement in _COMPILED:
            line = pattern.sub(replacement, line)
        lines.append(line)
    out = "\n".join(lines)
    for index, sync_text in enumerate(held):
        out = out.replace(f"\0{index}\0", sync_text)
    return HEADER + out


def main(argv: list[str]) -> int:
    expected = unasync(SOURCE.read_text("utf-8"))
    if "--check" in argv:
        if TARGET.read_text("utf-8") != expected:
            print(f"{TARGET} differs from what tools/unasync.py makes of {SOURCE.name}: run python tools/unasync.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(expected, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
