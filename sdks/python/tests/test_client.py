"""RelayClient and AsyncRelayClient against a real gateway and the fake provider: what leaves the device holds only
aliases, the answers come back with the originals, streams restore aliases cut across frames, receipts verify
offline, failures are typed and fail closed (nothing forwarded, nothing debited)."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from privacy_relay import (
    AsyncRelayClient,
    AuthenticationError,
    ConfigurationError,
    GatewayIdentityError,
    NameModelUnavailableError,
    RateLimitError,
    RelayClient,
    StreamError,
    verify_receipt,
)
from privacy_relay.wire.ecdsa import SigningKey

from .gateway import Relay

PROMPT = "Write to jane.doe@example.com and call +44 20 7946 0958 about IBAN DE89 3704 0044 0532 0130 00."
ORIGINALS = ("jane.doe@example.com", "+44 20 7946 0958", "DE89 3704 0044 0532 0130 00")


def upstream_bodies(relay: Relay) -> list[str]:
    return [r["body"] for r in relay.received() if r["path"].startswith("/v1/")]


def assert_only_aliases_left(relay: Relay) -> list[str]:
    bodies = upstream_bodies(relay)
    assert bodies, "the provider received nothing"
    for body in bodies:
        for original in ORIGINALS:
            assert original not in body
    return bodies


def balance(client: RelayClient) -> str:
    return client.rest.self.balance()["balance_usd"]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def client(relay: Relay, device_key: SigningKey):
    api_key, _ = relay.funded_key()
    relay.reset_provider()
    with RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as c:
        yield c


def test_chat_non_streamed_sends_only_aliases_and_answers_with_the_originals(relay: Relay, client: RelayClient) -> None:
    before = balance(client)
    answer = client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": PROMPT}])
    assert answer["object"] == "chat.completion"
    assert answer["choices"][0]["message"]["content"] == f"Echo: {PROMPT}"
    sent = json.loads(assert_only_aliases_left(relay)[0])
    assert sent == answer.tokenised_request
    tokenised = sent["messages"][0]["content"]
    assert "<EMAIL_1_" in tokenised and "<PHONE_1_" in tokenised and "<IBAN_1_" in tokenised
    assert answer.request_id
    assert answer.receipt is not None and answer.receipt["v"] == 2 and answer.receipt["model"] == "local-chat"
    assert answer.receipt_verified is True
    assert answer.receipt_verification.reason is None
    # Offline again, with the JWKS the gateway publishes: a changed receipt no longer verifies.
    jwks = httpx.get(f"{relay.url}/api/.well-known/service-receipt-pubkeys.jwks").json()
    assert verify_receipt(answer.receipt, jwks).valid
    assert verify_receipt({**answer.receipt, "output_tokens": answer.receipt["output_tokens"] + 1}, jwks).reason.startswith("signature:")
    assert answer.countersignature is not None and verify_receipt(answer.countersignature, jwks).valid
    assert balance(client) != before  # metered and debited


def test_chat_streamed_restores_aliases_cut_across_frames_and_verifies_the_trailer(relay: Relay, client: RelayClient) -> None:
    with client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": PROMPT}], stream=True) as stream:
        chunks = list(stream)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
    assert text == f"Echo: {PROMPT}"
    sent = json.loads(assert_only_aliases_left(relay)[0])
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert all("<" not in (c["choices"][0]["delta"].get("content") or "") for c in chunks if c.get("choices"))
    assert stream.receipt is not None and stream.receipt_verified is True
    assert stream.request_id


def test_messages_streamed_anthropic_events_come_back_with_the_originals(relay: Relay, client: RelayClient) -> None:
    stream = client.messages.create(model="local-chat", max_tokens=64, messages=[{"role": "user", "content": PROMPT}], stream=True)
    events = list(stream)
    text = "".join(e["delta"]["text"] for e in events if e.get("type") == "content_block_delta" and e["delta"].get("type") == "text_delta")
    assert PROMPT in text
    assert_only_aliases_left(relay)
    assert stream.receipt_verified is True


def test_embeddings_use_stable_aliases_so_equal_inputs_send_equal_text(relay: Relay, client: RelayClient) -> None:
    first = client.embeddings.create(model="local-embed", input=["mail jane.doe@example.com"])
    second = client.embeddings.create(model="local-embed", input=["mail jane.doe@example.com"])
    assert first.tokenised_request == second.tokenised_request
    assert "<EMAIL_" in first.tokenised_request["input"][0] and "jane.doe" not in json.dumps(first.tokenised_request)
    assert first["data"][0]["embedding"] == second["data"][0]["embedding"]
    assert first.receipt_verified is True


def test_failing_name_model_fails_closed_nothing_sent_nothing_debited(relay: Relay, device_key: SigningKey) -> None:
    api_key, _ = relay.funded_key()
    relay.reset_provider()
    url = f"http://127.0.0.1:{closed_port()}/v1/entities"
    with RelayClient(relay.url, api_key=api_key, name_model=url, device_key=device_key) as c:
        before = balance(c)
        with pytest.raises(NameModelUnavailableError) as raised:
            c.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "Hello Jane Cooper"}])
        assert raised.value.code == "name_model_unavailable" and raised.value.status == 0
        assert "nothing was sent" in raised.value.message
        assert upstream_bodies(relay) == []
        assert balance(c) == before


def test_builtin_name_model_tokenises_names_before_they_leave(relay: Relay, device_key: SigningKey) -> None:
    api_key, _ = relay.funded_key()
    relay.reset_provider()
    with RelayClient(relay.url, api_key=api_key, device_key=device_key) as c:
        answer = c.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "Dear Anna, Mr Oberhuber will call."}])
    assert answer["choices"][0]["message"]["content"] == "Echo: Dear Anna, Mr Oberhuber will call."
    body = upstream_bodies(relay)[0]
    assert "Anna" not in body and "Oberhuber" not in body and "<PERSON_1_" in body


def test_a_wrong_key_is_a_typed_401_with_code_and_request_id(relay: Relay, device_key: SigningKey) -> None:
    relay.reset_provider()
    with RelayClient(relay.url, api_key="svc_" + "a" * 40, name_model="off", device_key=device_key) as c:
        with pytest.raises(AuthenticationError) as raised:
            c.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status == 401 and raised.value.code and raised.value.request_id
    assert upstream_bodies(relay) == []


def test_rate_limit_is_a_typed_429_with_retry_after(relay: Relay, device_key: SigningKey) -> None:
    api_key, _ = relay.funded_key()
    with RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as c:
        with pytest.raises(RateLimitError) as raised:
            for _ in range(30):
                c.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status == 429 and raised.value.code == "rate_limited"
    assert raised.value.retry_after_seconds is not None and raised.value.retry_after_seconds > 0


def test_a_url_that_is_not_a_gateway_gets_no_key_and_no_content(relay: Relay, device_key: SigningKey) -> None:
    relay.reset_provider()
    api_key = "svc_" + "b" * 40
    with RelayClient(relay.provider_url, api_key=api_key, name_model="off", device_key=device_key) as c:
        with pytest.raises(GatewayIdentityError) as raised:
            c.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": PROMPT}])
    assert raised.value.code == "gateway_identity_failed"
    assert all(api_key not in json.dumps(r["headers"]) and "jane.doe" not in r["body"] for r in relay.received())


def test_settings_are_checked_before_anything_is_sent(tmp_path) -> None:
    with pytest.raises(ConfigurationError):
        RelayClient("http://relay.example.com", api_key="svc_abc")  # plain http off loopback
    with pytest.raises(ConfigurationError):
        RelayClient("https://relay.example", api_key="sk-not-a-gateway-key")
    key_file = tmp_path / "key"
    key_file.write_text("svc_abc\n")
    key_file.chmod(0o644)
    with pytest.raises(ConfigurationError) as raised:
        RelayClient("https://relay.example", api_key_file=str(key_file))
    assert "readable by other users" in raised.value.message and "svc_abc" not in raised.value.message
    key_file.chmod(0o600)
    assert RelayClient("https://relay.example", api_key_file=str(key_file))._core.api_key() == "svc_abc"
    with pytest.raises(ConfigurationError):
        RelayClient("https://relay.example", name_model="ftp://model")


def test_async_client_relays_non_streamed_and_streamed(relay: Relay, device_key: SigningKey) -> None:
    api_key, _ = relay.funded_key()
    relay.reset_provider()

    async def run() -> tuple[dict, str, object]:
        async with AsyncRelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key) as c:
            answer = await c.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": PROMPT}])
            stream = await c.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": PROMPT}], stream=True)
            text = ""
            async for chunk in stream:
                if chunk.get("choices"):
                    text += chunk["choices"][0]["delta"].get("content") or ""
            return answer, text, stream

    answer, text, stream = asyncio.run(run())
    assert answer["choices"][0]["message"]["content"] == f"Echo: {PROMPT}"
    assert answer.receipt_verified is True
    assert text == f"Echo: {PROMPT}"
    assert stream.receipt_verified is True  # type: ignore[attr-defined]
    assert len(assert_only_aliases_left(relay)) == 2


def test_a_stream_the_upstream_cuts_is_a_stream_error_not_a_short_answer(relay: Relay, client: RelayClient) -> None:
    httpx.post(f"{relay.provider_url}/_fake/behaviour", json={"kind": "cut-stream", "afterChunks": 3}).raise_for_status()
    try:
        stream = client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": PROMPT}], stream=True)
        received = []
        with pytest.raises(StreamError) as raised:
            for chunk in stream:
                received.append(chunk)
        assert raised.value.code == "stream_error" and raised.value.request_id == stream.request_id
        assert stream.receipt is None
    finally:
        httpx.post(f"{relay.provider_url}/_fake/behaviour", json={"kind": "normal"}).raise_for_status()
