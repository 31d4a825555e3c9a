"""The drop-in for the official `openai` package: an httpx transport, exercised here directly with httpx, exactly as
openai's client drives it (an httpx.Client with `transport=`, OpenAI-shaped paths under any base URL, its own
Authorization header, streaming with `stream=True`). The official package itself (now in the test extra) runs over
the transport in test_egress_client.py."""

from __future__ import annotations

import json

import httpx
import pytest

from privacy_relay import RelayClient
from privacy_relay.wire.ecdsa import SigningKey

from .gateway import Relay
from .test_client import PROMPT, assert_only_aliases_left


@pytest.fixture()
def http(relay: Relay, device_key: SigningKey):
    api_key, _ = relay.funded_key()
    relay.reset_provider()
    client = RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key)
    with httpx.Client(base_url="https://api.openai.com/v1", transport=client.http_transport(), headers={"authorization": "Bearer sk-ignored"}) as h:
        yield h
    client.close()


def test_a_chat_completion_through_the_transport_is_private(relay: Relay, http: httpx.Client) -> None:
    res = http.post("/chat/completions", json={"model": "local-chat", "messages": [{"role": "user", "content": PROMPT}]})
    assert res.status_code == 200
    assert res.json()["choices"][0]["message"]["content"] == f"Echo: {PROMPT}"
    assert res.headers["x-service-receipt-v2"]
    assert_only_aliases_left(relay)
    assert all("sk-ignored" not in json.dumps(r["headers"]) for r in relay.received())


def test_a_streamed_completion_through_the_transport_is_restored_frame_by_frame(relay: Relay, http: httpx.Client) -> None:
    body = {"model": "local-chat", "stream": True, "messages": [{"role": "user", "content": PROMPT}]}
    with http.stream("POST", "/chat/completions", json=body) as res:
        assert res.status_code == 200
        raw = "".join(res.iter_text())
    text = ""
    for frame in raw.split("\n\n"):
        if frame.startswith("data: {"):
            chunk = json.loads(frame[6:])
            if chunk.get("choices"):
                text += chunk["choices"][0]["delta"].get("content") or ""
    assert text == f"Echo: {PROMPT}"
    assert "event: receipt-v2" in raw and "data: [DONE]" in raw
    assert_only_aliases_left(relay)


def test_models_and_unknown_routes(http: httpx.Client) -> None:
    assert any(m["id"] == "local-chat" for m in http.get("/models").json()["data"])
    res = http.get("/files")
    assert res.status_code == 404 and res.json()["error"]["code"] == "not_found"
    bad = http.post("/chat/completions", content=b"not json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_request"


def test_the_async_transport_for_async_openai_streams_privately(relay: Relay, device_key: SigningKey) -> None:
    import asyncio

    from privacy_relay import AsyncRelayClient

    api_key, _ = relay.funded_key()
    relay.reset_provider()

    async def run() -> tuple[int, str, dict]:
        async with AsyncRelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key) as client:
            async with httpx.AsyncClient(base_url="https://api.openai.com/v1", transport=client.http_transport()) as h:
                whole = (await h.post("/chat/completions", json={"model": "local-chat", "messages": [{"role": "user", "content": PROMPT}]})).json()
                async with h.stream("POST", "/chat/completions", json={"model": "local-chat", "stream": True, "messages": [{"role": "user", "content": PROMPT}]}) as res:
                    raw = "".join([t async for t in res.aiter_text()])
                return res.status_code, raw, whole

    status, raw, whole = asyncio.run(run())
    assert status == 200 and whole["choices"][0]["message"]["content"] == f"Echo: {PROMPT}"
    text = "".join(
        (json.loads(f[6:])["choices"] or [{"delta": {}}])[0]["delta"].get("content") or "" for f in raw.split("\n\n") if f.startswith("data: {") and json.loads(f[6:]).get("choices") is not None
    )
    assert text == f"Echo: {PROMPT}"
    assert len(assert_only_aliases_left(relay)) == 2
