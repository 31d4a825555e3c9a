"""RelayClient and AsyncRelayClient come from one source (issue 33 item 5): client.py is generated from
async_client.py by tools/unasync.py, and the suite fails when they differ. The behaviours the hand copies had drifted
on are held here in both modes: the identity probe's JWKS is kept (one GET per client, the sync client made two), a
receipt naming a kid the keys lack fetches them again at most once a second (the async client fetched on every such
receipt), and both have the same surface, signatures and docstrings (the async one lacked most docstrings)."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import inspect
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from privacy_relay import AsyncRelayClient, RelayClient
from privacy_relay.verify.jwks import GATEWAY_IDENTITY_PROBE_PATH, JwksError, JwksKeys
from privacy_relay.wire.ecdsa import SigningKey

from .gateway import Relay

TOOL = Path(__file__).resolve().parents[1] / "tools" / "unasync.py"
MESSAGES = [{"role": "user", "content": "Write to jane.doe@example.com"}]


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("unasync_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_client_py_is_what_the_generator_makes_of_async_client_py() -> None:
    run = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_the_check_fails_on_a_hand_edit_and_on_a_changed_exact_sentence(tmp_path: Path) -> None:
    tool = _tool()
    source = tool.SOURCE.read_text("utf-8")
    generated = tool.unasync(source)
    # A sync-only edit (the drift this prevents) is not what the generator makes.
    assert generated.replace("return response.json()", "return response.json() or {}") != generated
    assert tool.unasync(source.replace("await self._ready()", "pass", 1)) != generated
    # A sentence EXACT translates that changed in the async file stops the generator instead of slipping through.
    with pytest.raises(SystemExit):
        tool.unasync(source.replace("This file is the one source of both clients", "This file is one source"))
    # The translation itself: no async left, the sync names in.
    assert "async " not in generated and "await " not in generated and "AsyncRelayClient(" not in generated
    assert "class RelayClient:" in generated and "threading.Lock()" in generated and "in_caller_thread(" in generated


class _Counting(httpx.BaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class _AsyncCounting(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _jwks_gets(paths: list[str]) -> int:
    return sum(1 for p in paths if p == GATEWAY_IDENTITY_PROBE_PATH)


def _forged(receipt: dict) -> dict:
    forged = copy.deepcopy(receipt)
    forged["kid"] = "kid-nobody-published"
    return forged


def _in_both_modes(relay: Relay, device_key: SigningKey, scenario: Callable[[Any, Callable[[Any], Any]], Any]) -> list[tuple[list[str], Any]]:
    """Runs `scenario(client, call)` with RelayClient and with AsyncRelayClient (`call` awaits in the async run);
    answers (paths the client sent, what the scenario returned) for each."""
    api_key, _ = relay.funded_key()
    results = []
    sync_transport = _Counting()
    with RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0, http_client=httpx.Client(transport=sync_transport)) as client:
        results.append((sync_transport.paths, scenario(client, lambda value: value)))
    async_transport = _AsyncCounting()

    async def run() -> Any:
        async with AsyncRelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0, http_client=httpx.AsyncClient(transport=async_transport)) as client:
            loop = asyncio.get_running_loop()

            def call(value: Any) -> Any:
                # The scenario is plain code: run each awaitable to its end on this loop's thread pool.
                return asyncio.run_coroutine_threadsafe(value, loop).result() if inspect.isawaitable(value) else value

            return await asyncio.to_thread(scenario, client, call)

    results.append((async_transport.paths, asyncio.run(run())))
    return results


def test_the_identity_probe_keys_verify_the_first_receipt_without_a_second_fetch(relay: Relay, device_key: SigningKey) -> None:
    def scenario(client: Any, call: Callable[[Any], Any]) -> Any:
        answer = call(client.chat.completions.create(model="local-chat", messages=MESSAGES))
        return answer.receipt_verified

    for paths, verified in _in_both_modes(relay, device_key, scenario):
        assert verified is True
        assert _jwks_gets(paths) == 1, paths
        assert paths[0] == GATEWAY_IDENTITY_PROBE_PATH and paths[1] == "/api/v1/chat/completions"


def test_a_receipt_with_an_unknown_kid_fetches_the_keys_again_at_most_once_a_second(relay: Relay, device_key: SigningKey) -> None:
    def scenario(client: Any, call: Callable[[Any], Any]) -> Any:
        answer = call(client.chat.completions.create(model="local-chat", messages=MESSAGES))
        forged = _forged(answer.receipt)
        first = call(client.rest.receipts.verify(forged))  # keys fetched < 1 s ago: no fetch
        time.sleep(1.1)
        second = call(client.rest.receipts.verify(forged))  # a rotation since? one fetch
        third = call(client.rest.receipts.verify(forged))  # just fetched: no fetch
        genuine = call(client.rest.receipts.verify(answer.receipt))
        return first.valid, second.valid, third.valid, genuine.valid

    for paths, verdicts in _in_both_modes(relay, device_key, scenario):
        assert verdicts == (False, False, False, True)
        assert _jwks_gets(paths) == 2, paths


def test_the_keys_fetch_answers_the_same_typed_errors_in_both_modes() -> None:
    keys = JwksKeys("https://gw.example/api/.well-known/service-receipt-pubkeys.jwks")
    assert keys.wants_fetch() and keys.wants_fetch("k1")
    with pytest.raises(JwksError) as unreachable:
        keys.take(503, None)
    assert unreachable.value.code == "jwks_unreachable" and unreachable.value.status == 503 and "gw.example" in str(unreachable.value)
    with pytest.raises(JwksError) as invalid:
        keys.take(200, {"keys": "none"})
    assert invalid.value.code == "jwks_invalid"
    assert keys.unreachable(OSError("refused")).code == "jwks_unreachable"


def _surface(obj: Any, prefix: str = "") -> dict[str, tuple[str, str]]:
    """Public callables reachable from a client: name -> (signature, docstring with Async names made sync)."""
    found: dict[str, tuple[str, str]] = {}
    for name in dir(obj):
        if name.startswith("_") or name in ("gateway_url", "rest"):
            continue
        value = getattr(obj, name)
        if callable(value):
            doc = (inspect.getdoc(value) or "").replace("AsyncRelay", "Relay").replace("AsyncOpenAI", "OpenAI").replace("AsyncClient", "Client").replace("AsyncConversation", "Conversation")
            signature = str(inspect.signature(value)).replace("Async", "").replace("Awaitable", "")
            found[prefix + name] = (signature, doc)
        elif hasattr(value, "__dict__"):
            found.update(_surface(value, f"{prefix}{name}."))
    return found


def test_both_clients_have_the_same_surface_signatures_and_docstrings(tmp_path: Path) -> None:
    key = SigningKey.generate()
    sync = RelayClient("https://gw.example", api_key=None, device_key=key)
    async_ = AsyncRelayClient("https://gw.example", api_key=None, device_key=key)
    sync_surface = _surface(sync)
    async_surface = _surface(async_)
    # The only names that differ are the context manager's: close/aclose.
    assert set(sync_surface) - {"close"} == set(async_surface) - {"aclose"}
    for name in set(sync_surface) - {"close"}:
        assert sync_surface[name] == async_surface[name], name
    for name in ("chat.completions.create", "messages.create", "messages.count_tokens", "embeddings.create", "responses.create", "http_transport"):
        assert sync_surface[name][1], f"{name} has no docstring"
    sync.close()
    asyncio.run(async_.aclose())


def test_the_transports_generated_regions_are_checked_too() -> None:
    tool = _tool()
    for path in tool.REGION_FILES:
        text = path.read_text("utf-8")
        assert tool.with_region(text, path) == text, path.name
        # A hand edit inside the generated region is undone by the generator (so --check fails on it).
        start = text.index(tool.TARGET_MARK) + len(tool.TARGET_MARK)
        edited = text[:start] + "# hand edit\n" + text[start:]
        assert tool.with_region(edited, path) != edited
        generated = text[start : text.index(tool.TARGET_END)]
        assert "async " not in generated and "await " not in generated


def test_both_retry_transports_wait_through_an_injectable_sleep_the_same_way() -> None:
    """The async retry loop slept with asyncio.sleep (not injectable) while the sync one took `sleep`: the same
    Retry-After waits are now observable in both."""
    from privacy_relay.transport import AsyncTransport, RetryPolicy, Transport

    def answers() -> Callable[[httpx.Request], httpx.Response]:
        script = [httpx.Response(429, json={"error": {"code": "rate_limited", "message": "slow"}}, headers={"retry-after": "2"}), httpx.Response(200, json={"ok": True})]
        return lambda request: script.pop(0)

    sync_waits: list[float] = []
    sync = Transport(httpx.Client(transport=httpx.MockTransport(answers())), RetryPolicy(retries=2), 5.0, sleep=sync_waits.append)
    assert sync.send("POST", "https://relay.example/x", headers={"idempotency-key": "k"}, content=b"{}").json() == {"ok": True}
    async_waits: list[float] = []

    async def record(seconds: float) -> None:
        async_waits.append(seconds)

    async def run() -> Any:
        transport = AsyncTransport(httpx.AsyncClient(transport=httpx.MockTransport(answers())), RetryPolicy(retries=2), 5.0, sleep=record)
        return (await transport.send("POST", "https://relay.example/x", headers={"idempotency-key": "k"}, content=b"{}")).json()

    assert asyncio.run(run()) == {"ok": True}
    assert sync_waits == async_waits == [2.0]
