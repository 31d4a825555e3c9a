"""Every leak of issue 31 through the Python SDK against the real gateway and the fake provider: RelayClient,
AsyncRelayClient, and the official `openai` package over the SDK's httpx transport. End-user identifiers reach the
provider only as USER_ aliases; media, invented fields and part types and deep nesting are refused on the device and
the provider receives nothing; opt-ins send what they name, declared in the attestation."""

from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest

from privacy_relay import (
    AsyncRelayClient,
    NestingTooDeepError,
    RelayClient,
    UnsupportedContentError,
    UnsupportedFieldError,
)
from privacy_relay.wire.ecdsa import SigningKey

from .gateway import Relay

EMAIL = "jane.doe@example.com"
PHONE = "+44 20 7946 0958"
NAME = "Maria Kowalska"
SPEAKER = "maria_k"
ORIGINALS = (EMAIL, PHONE, NAME, SPEAKER)
PNG_DATA_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def upstream(relay: Relay) -> list[str]:
    return [r["body"] for r in relay.received() if r["path"].startswith("/v1/")]


def assert_no_original_left(relay: Relay) -> list[dict]:
    bodies = upstream(relay)
    assert bodies, "the provider received nothing"
    for body in bodies:
        for original in ORIGINALS:
            assert original not in body
    return [json.loads(b) for b in bodies]


def assert_nothing_sent(relay: Relay) -> None:
    assert upstream(relay) == []


def openai_leaky_chat() -> dict:
    return {
        "model": "local-chat",
        "messages": [{"role": "user", "name": SPEAKER, "content": f"Write to {EMAIL}"}],
        "user": EMAIL,
        "metadata": {"customer": NAME, "phone": PHONE},
        "store": True,
    }


def anthropic_leaky_message() -> dict:
    return {"model": "local-chat", "max_tokens": 32, "metadata": {"user_id": EMAIL}, "messages": [{"role": "user", "content": [{"type": "text", "text": f"Call {PHONE}"}]}]}


@pytest.fixture()
def api_key(relay: Relay) -> str:
    key, _ = relay.funded_key()
    relay.reset_provider()
    return key


def relay_client(relay: Relay, api_key: str, device_key: SigningKey, **kwargs) -> RelayClient:
    return RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0, **kwargs)


def test_openai_user_metadata_and_messages_name_reach_the_provider_only_as_user_aliases(relay: Relay, api_key: str, device_key: SigningKey) -> None:
    with relay_client(relay, api_key, device_key) as client:
        body = openai_leaky_chat()
        first = client.chat.completions.create(**body)
        second = client.chat.completions.create(**body)
    assert first["choices"][0]["message"]["content"] == f"Echo: Write to {EMAIL}"
    sent = assert_no_original_left(relay)
    assert sent[0]["user"].startswith("USER_") and sent[0]["messages"][0]["name"].startswith("USER_")
    assert sent[0]["metadata"]["customer"].startswith("USER_") and sent[0]["metadata"]["phone"].startswith("USER_")
    # Device-stable: the same end user, the same alias in every call (the text aliases are per request).
    assert sent[1]["user"] == sent[0]["user"] and sent[1]["metadata"] == sent[0]["metadata"]
    assert first.receipt_verified is True


def test_anthropic_metadata_user_id_reaches_the_provider_only_as_a_user_alias(relay: Relay, api_key: str, device_key: SigningKey) -> None:
    with relay_client(relay, api_key, device_key) as client:
        answer = client.messages.create(**anthropic_leaky_message())
    assert PHONE in json.dumps(answer)
    [sent] = assert_no_original_left(relay)
    assert sent["metadata"]["user_id"].startswith("USER_")


@pytest.mark.parametrize(
    ("route", "body", "path", "kind"),
    [
        (
            "chat",
            {"model": "local-chat", "messages": [{"role": "user", "content": [{"type": "text", "text": "read it"}, {"type": "image_url", "image_url": {"url": PNG_DATA_URL}}]}]},
            "/messages/0/content/1",
            "image",
        ),
        (
            "messages",
            {"model": "local-chat", "max_tokens": 8, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_DATA_URL.split(",")[1]}}]}]},
            "/messages/0/content/0/source",
            "image",
        ),
    ],
    ids=["image_url data URL", "Anthropic image block"],
)
def test_images_are_refused_415_naming_the_part_and_nothing_is_sent(relay: Relay, api_key: str, device_key: SigningKey, route: str, body: dict, path: str, kind: str) -> None:
    with relay_client(relay, api_key, device_key) as client:
        create = client.chat.completions.create if route == "chat" else client.messages.create
        with pytest.raises(UnsupportedContentError) as raised:
            create(**body)
    assert (raised.value.status, raised.value.code, raised.value.path, raised.value.kind) == (415, "unsupported_content", path, kind)
    assert "iVBOR" not in str(raised.value)
    assert_nothing_sent(relay)


def test_an_invented_field_an_invented_part_type_and_deep_nesting_are_refused_and_nothing_is_sent(relay: Relay, api_key: str, device_key: SigningKey) -> None:
    with relay_client(relay, api_key, device_key) as client:
        with pytest.raises(UnsupportedFieldError) as field:
            client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "hi"}], x_trace_note=EMAIL)
        assert (field.value.status, field.value.path, field.value.setting) == (400, "/x_trace_note", "PASSTHROUGH_PATHS")
        with pytest.raises(UnsupportedFieldError) as part:
            client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": [{"type": "hologram", "data": EMAIL}]}])
        assert part.value.path == "/messages/0/content/0"
        deep: object = EMAIL
        for _ in range(80):
            deep = {"d": deep}
        with pytest.raises(NestingTooDeepError):
            client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "hi"}], metadata={"k": deep})
    assert_nothing_sent(relay)


def test_opt_ins_send_what_they_name_declared_and_the_gateway_accepts_the_claim(relay: Relay, api_key: str, device_key: SigningKey) -> None:
    with relay_client(relay, api_key, device_key, media_policy="pass", passthrough_paths=["/x_trace_note"]) as client:
        answer = client.chat.completions.create(
            model="local-chat",
            x_trace_note="ticket 42",
            messages=[{"role": "user", "content": [{"type": "text", "text": f"what is this, {EMAIL}?"}, {"type": "image_url", "image_url": {"url": PNG_DATA_URL}}]}],
        )
        prepared = client._core.engine.prepare("chat.completions", {"model": "local-chat", "x_trace_note": "t", "messages": [{"role": "user", "content": "hi"}]})
        # A remote URL that names somebody is refused even under pass.
        with pytest.raises(UnsupportedContentError):
            client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": f"https://cdn.example.com/{EMAIL}.png"}}]}])
    assert answer.receipt_verified is True
    [sent] = assert_no_original_left(relay)
    assert sent["x_trace_note"] == "ticket 42" and sent["messages"][0]["content"][1]["image_url"]["url"] == PNG_DATA_URL
    assert prepared.passthrough == [{"path": "/x_trace_note", "kind": "field"}]


def test_the_async_client_closes_the_same_leaks(relay: Relay, api_key: str, device_key: SigningKey) -> None:
    async def run() -> None:
        async with AsyncRelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as client:
            await client.chat.completions.create(**openai_leaky_chat())
            await client.messages.create(**anthropic_leaky_message())
            with pytest.raises(UnsupportedContentError):
                await client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": PNG_DATA_URL}}]}])

    asyncio.run(run())
    assert len(assert_no_original_left(relay)) == 2


# -- the official openai package over the SDK's httpx transport --------------------------------------------------


@pytest.fixture()
def official(relay: Relay, api_key: str, device_key: SigningKey):
    client = relay_client(relay, api_key, device_key)
    with httpx.Client(transport=client.http_transport()) as http:
        yield openai.OpenAI(base_url=f"{relay.url}/v1", api_key="sk-unused", http_client=http, max_retries=0)
    client.close()


def test_openai_package_user_metadata_name_and_embeddings_user_reach_the_provider_only_as_aliases(relay: Relay, official: openai.OpenAI) -> None:
    completion = official.chat.completions.create(**openai_leaky_chat())
    assert completion.choices[0].message.content == f"Echo: Write to {EMAIL}"
    official.embeddings.create(model="local-embed", input=[f"contact {EMAIL}"], user=EMAIL)
    sent = assert_no_original_left(relay)
    assert sent[0]["user"].startswith("USER_") and sent[0]["messages"][0]["name"].startswith("USER_")
    assert sent[1]["user"] == sent[0]["user"]
    assert all("sk-unused" not in json.dumps(r["headers"]) for r in relay.received())


def test_openai_package_gets_local_refusals_in_its_error_types_and_nothing_is_sent(relay: Relay, official: openai.OpenAI) -> None:
    with pytest.raises(openai.APIStatusError) as image:
        official.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": PNG_DATA_URL}}]}])
    assert image.value.status_code == 415
    assert image.value.body["code"] == "unsupported_content" and image.value.body["details"] == {"path": "/messages/0/content/0", "kind": "image", "setting": "MEDIA_POLICY"}
    with pytest.raises(openai.BadRequestError) as field:
        official.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "hi"}], extra_body={"x_trace_note": EMAIL})
    assert field.value.body["code"] == "unsupported_field" and field.value.body["details"]["path"] == "/x_trace_note"
    assert EMAIL not in str(field.value)
    assert_nothing_sent(relay)


def test_the_transport_settings_override_the_clients(relay: Relay, api_key: str, device_key: SigningKey) -> None:
    client = relay_client(relay, api_key, device_key)
    with httpx.Client(transport=client.http_transport(passthrough_paths=["/messages/*/x_tag"])) as http:
        official = openai.OpenAI(base_url=f"{relay.url}/v1", api_key="sk-unused", http_client=http, max_retries=0)
        official.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": f"hi {EMAIL}", "x_tag": "kept"}])  # type: ignore[typeddict-unknown-key]
    client.close()
    [sent] = assert_no_original_left(relay)
    assert sent["messages"][0]["x_tag"] == "kept"


def test_a_body_too_deep_for_the_json_parser_is_a_local_400(relay: Relay, api_key: str, device_key: SigningKey) -> None:
    client = relay_client(relay, api_key, device_key)
    with httpx.Client(base_url="https://api.openai.com/v1", transport=client.http_transport()) as http:
        deep = '{"model": "local-chat", "messages": [], "stop": ' + "[" * 100_000 + "]" * 100_000 + "}"
        res = http.post("/chat/completions", content=deep.encode(), headers={"content-type": "application/json"})
        shallow = '{"model": "local-chat", "messages": [], "stop": ' + "[" * 100 + "]" * 100 + "}"
        res2 = http.post("/messages", content=shallow.encode(), headers={"content-type": "application/json"})
    client.close()
    assert res.status_code == 400 and res.json()["error"]["code"] == "nesting_too_deep"
    assert res2.status_code == 400 and res2.json()["error"]["type"] == "nesting_too_deep" and res2.json()["error"]["details"]["path"].startswith("/stop/0/0")
    assert_nothing_sent(relay)


def test_the_anthropic_shape_through_the_transport_aliases_metadata_user_id_and_refuses_image_blocks(relay: Relay, api_key: str, device_key: SigningKey) -> None:
    # The anthropic package is not in the test extra: its requests are made here as it makes them (POST /v1/messages).
    client = relay_client(relay, api_key, device_key)
    with httpx.Client(base_url="https://api.anthropic.com/v1", transport=client.http_transport(), headers={"x-api-key": "sk-ant-unused"}) as http:
        ok = http.post("/messages", json=anthropic_leaky_message())
        relayed = assert_no_original_left(relay)
        relay.reset_provider()
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_DATA_URL.split(",")[1]}}
        refused = http.post("/messages", json={"model": "local-chat", "max_tokens": 8, "messages": [{"role": "user", "content": [image]}]})
    client.close()
    assert ok.status_code == 200 and relayed[0]["metadata"]["user_id"].startswith("USER_")
    assert refused.status_code == 415
    assert refused.json() == {
        "type": "error",
        "error": {"type": "unsupported_content", "message": refused.json()["error"]["message"], "details": {"path": "/messages/0/content/0/source", "kind": "image", "setting": "MEDIA_POLICY"}},
    }
    assert_nothing_sent(relay)
