"""Writes the sync client from the async one, so the two cannot drift (issue 33 item 5): src/privacy_relay/client.py
from async_client.py, and in transport.py and httpx_transport.py the region between `# unasync: generated` and
`# unasync: end generated` from the region between `# unasync: source` and `# unasync: end source`. The method is
unasync's (and httpcore's scripts/unasync.py): drop `async`/`await`, map each async name to its sync twin. A few
sentences that must read differently are listed in EXACT, each checked to occur once, so a changed sentence fails
the run instead of slipping through.

    python tools/unasync.py          write the sync code
    python tools/unasync.py --check  exit 1 when the sync code is not what the async code makes (the suite runs it)
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
    (r"\bhttpx\.AsyncByteStream\b", "httpx.SyncByteStream"),
    (r"\bhandle_async_request\b", "handle_request"),
    (r"\b_AsyncDetokenisedSse\b", "_DetokenisedSse"),
    (r"\bAwaitable\[(\w+)\]", r"\1"),
    (r"\basyncio\.sleep\b", "time.sleep"),
    (r"\baread\b", "read"),
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
    """client.py from async_client.py."""
    return HEADER + _translate(source, EXACT)


def _translate(source: str, exact: list[tuple[str, str]]) -> str:
    held: list[str] = []
    for async_text, sync_text in exact:
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
    return out


SOURCE_MARK, SOURCE_END = "# unasync: source\n", "# unasync: end source\n"
TARGET_MARK, TARGET_END = "# unasync: generated\n", "# unasync: end generated\n"
#: Files holding an async region and its generated sync twin.
REGION_FILES = [PACKAGE / "transport.py", PACKAGE / "httpx_transport.py"]


def _between(text: str, mark: str, end: str, path: Path) -> tuple[int, int]:
    if text.count(mark) != 1 or text.count(end) != 1:
        raise SystemExit(f"tools/unasync.py: {path.name} needs one {mark.strip()!r} and one {end.strip()!r} line")
    start = text.index(mark) + len(mark)
    return start, text.index(end, start)


def with_region(text: str, path: Path) -> str:
    """`text` with its generated region rewritten from its source region."""
    s_start, s_end = _between(text, SOURCE_MARK, SOURCE_END, path)
    t_start, t_end = _between(text, TARGET_MARK, TARGET_END, path)
    generated = _translate(text[s_start:s_end], [])
    return text[:t_start] + generated + text[t_end:]


def expected_files() -> dict[Path, str]:
    out = {TARGET: unasync(SOURCE.read_text("utf-8"))}
    for path in REGION_FILES:
        out[path] = with_region(path.read_text("utf-8"), path)
    return out


def main(argv: list[str]) -> int:
    expected = expected_files()
    if "--check" in argv:
        stale = [path for path, text in expected.items() if path.read_text("utf-8") != text]
        for path in stale:
            print(f"{path} differs from what tools/unasync.py makes of its async code: run python tools/unasync.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in expected.items():
        path.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
