"""Where the engine's work runs. It is CPU work (about 2 ms for 2 KB, about 1 s for 1 MB): the async client runs it
in a worker thread so a long prompt does not stall the event loop; the sync client runs it in the caller's thread.
(async_client.py uses in_worker_thread; client.py, generated from it, in_caller_thread.)"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, TypeVar

T = TypeVar("T")


async def in_worker_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(fn, *args, **kwargs)


def in_caller_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    return fn(*args, **kwargs)
