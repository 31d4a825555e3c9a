"""The egress policy in the Python engine, beyond the cross-language cases (test_vectors_egress_policy.py): the USER_
alias recipe and its device-stable secret, the attestation's passthrough claim, the client settings, image redaction
with a caller's redactor, hostile nesting built in Python, and the SDK errors."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import pytest

from privacy_relay import (
    ConfigurationError,
    EgressPolicyError,
    InvalidRequestError,
    NestingTooDeepError,
    RelayClient,
    UnsupportedContentError,
    UnsupportedFieldError,
)
from privacy_relay.attestation import verify_v3_signature
from privacy_relay.device import ALIAS_SECRET_FILE_NAME, client_config_dir
from privacy_relay.engine import Engine
from privacy_relay.tokeniser.tokenise import Tokeniser, end_user_alias
from privacy_relay.wire.base64 import decode_json_header
from privacy_relay.wire.ecdsa import SigningKey

from .vectors import load

KEY = SigningKey.generate()
EMAIL = "jane.doe@example.com"
PHONE = "+44 20 7946 0958"
NAME = "Maria Kowalska"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
PNG_DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def chat(content, **extra):
    return {"model": "m", "messages": [{"role": "user", "content": content}], **extra}


def claims(prepared) -> dict:
    envelope = decode_json_header(prepared.headers["x-service-attestation"])
    assert verify_v3_signature(envelope)
    return envelope["claims"]["v3-attestation"]


def test_user_aliases_are_user_plus_ten_tag_characters_of_the_hmac_of_end_user_nul_value() -> None:
    secret = bytes(range(32))
    mac = hmac.new(secret, b"end-user\x00" + EMAIL.encode(), hashlib.sha256).digest()
    alphabet = load("aliases")["tag_alphabet"]
    assert end_user_alias(secret, EMAIL) == "USER_" + "".join(alphabet[b & 31] for b in mac[:10])
    # OpenAI's pattern for messages[].name, and never the value.
    assert all(c.isalnum() or c in "_-" for c in end_user_alias(secret, "Zoë O'Brien"))


def test_end_user_identifiers_get_the_same_alias_on_this_device_in_every_call_and_the_secret_is_made_only_when_needed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PRIVACY_RELAY_CONFIG_DIR", str(tmp_path / "device"))
    secret_file = client_config_dir() / ALIAS_SECRET_FILE_NAME
    # stable_embedding_aliases off: identifiers still get the device-stable alias.
    first = RelayClient("http://127.0.0.1:9", api_key="svc_abc", name_model="off", device_key=KEY, stable_embedding_aliases=False)
    first._core.engine.prepare("chat.completions", chat("no identifier here"))
    assert not secret_file.exists()
    body = chat("hi", user=EMAIL, safety_identifier=EMAIL, metadata={"customer": NAME, "phone": PHONE, "n": 3})
    body["messages"][0]["name"] = "maria_k"
    a = first._core.engine.prepare("chat.completions", body)
    assert secret_file.exists()
    b = RelayClient("http://127.0.0.1:9", api_key="svc_abc", name_model="off", device_key=KEY)._core.engine.prepare("chat.completions", body)
    sent = a.tokenised_body
    assert sent["user"] == sent["safety_identifier"] == b.tokenised_body["user"]
    assert sent["user"].startswith("USER_") and sent["messages"][0]["name"].startswith("USER_") and sent["metadata"]["n"] == 3
    for value in (EMAIL, NAME, PHONE, "maria_k"):
        assert value not in a.body_bytes.decode()
    assert a.detectors_fired == {"USER": 5} and claims(a)["detectors_fired"] == {"USER": 5}
    # USER_ aliases are not restored in answers: they are not in the map.
    assert a.map == {}
    # Another device: other aliases.
    monkeypatch.setenv("PRIVACY_RELAY_CONFIG_DIR", str(tmp_path / "other-device"))
    c = RelayClient("http://127.0.0.1:9", api_key="svc_abc", name_model="off", device_key=KEY)._core.engine.prepare("chat.completions", body)
    assert c.tokenised_body["user"] != sent["user"]


def test_the_attestation_names_what_was_passed_untokenised_and_omits_the_claim_when_nothing_was() -> None:
    engine = Engine(names=None, device_key=lambda: KEY, media_policy="pass", passthrough_paths=["/x_trace_note", "/messages/*/x_tag"])
    body = {
        "model": "m",
        "x_trace_note": "ticket 42",
        "messages": [{"role": "user", "x_tag": "a", "content": [{"type": "text", "text": f"read {EMAIL}"}, {"type": "image_url", "image_url": {"url": PNG_DATA_URL}}]}],
    }
    prepared = engine.prepare("chat.completions", body)
    expected = [{"path": "/messages/0/content/1", "kind": "image"}, {"path": "/messages/0/x_tag", "kind": "field"}, {"path": "/x_trace_note", "kind": "field"}]
    assert prepared.passthrough == expected and claims(prepared)["passthrough"] == expected
    assert EMAIL not in prepared.body_bytes.decode() and "ticket 42" in prepared.body_bytes.decode()
    plain = engine.prepare("chat.completions", chat("hi"))
    assert plain.passthrough == [] and "passthrough" not in claims(plain)
    # A per-call override (the httpx transport's settings) is used instead of the engine's.
    with pytest.raises(UnsupportedContentError):
        engine.prepare("chat.completions", body, media_policy="refuse")


def test_settings_are_checked_when_the_client_is_made() -> None:
    for kwargs in ({"media_policy": "maybe"}, {"passthrough_paths": "/x_note"}, {"passthrough_paths": ["x_note"]}, {"passthrough_paths": [3]}):
        with pytest.raises(ConfigurationError):
            RelayClient("http://127.0.0.1:9", api_key="svc_abc", **kwargs)
    client = RelayClient("http://127.0.0.1:9", api_key="svc_abc", media_policy="pass", passthrough_paths=("/messages/*/x_tag",))
    assert client._core.engine.media_policy == "pass" and client._core.engine.passthrough_paths == ("/messages/*/x_tag",)
    with pytest.raises(ConfigurationError):
        client.http_transport(media_policy="everything")


def test_refusals_are_typed_errors_with_the_path_kind_setting_and_never_the_value() -> None:
    engine = Engine(names=None, device_key=lambda: KEY)
    with pytest.raises(UnsupportedFieldError) as field:
        engine.prepare("chat.completions", chat("hi", x_trace_note=EMAIL))
    error = field.value
    assert isinstance(error, InvalidRequestError) and isinstance(error, EgressPolicyError)
    assert (error.status, error.code, error.path, error.setting) == (400, "unsupported_field", "/x_trace_note", "PASSTHROUGH_PATHS")
    assert error.details == {"path": "/x_trace_note", "setting": "PASSTHROUGH_PATHS"} and error.body["code"] == "unsupported_field"
    assert EMAIL not in str(error) and "passthrough_paths" in str(error)
    with pytest.raises(UnsupportedContentError) as media:
        engine.prepare("messages", {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]}]})
    assert (media.value.status, media.value.code, media.value.path, media.value.kind) == (415, "unsupported_content", "/messages/0/content/0/source", "image")
    assert media.value.details == {"path": "/messages/0/content/0/source", "kind": "image", "setting": "MEDIA_POLICY"}
    assert "iVBOR" not in str(media.value)


def test_nesting_built_in_python_is_refused_without_recursion_and_tuples_are_arrays() -> None:
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    started = time.monotonic()
    with pytest.raises(NestingTooDeepError) as raised:
        Engine(names=None, device_key=lambda: KEY).prepare("chat.completions", chat("hi", stop=deep))
    assert time.monotonic() - started < 5 and raised.value.status == 400 and raised.value.path.startswith("/stop/0/0/")
    meta: object = EMAIL
    for _ in range(70):
        meta = {"d": meta}
    with pytest.raises(NestingTooDeepError):
        Engine(names=None, device_key=lambda: KEY).prepare("chat.completions", chat("hi", metadata={"k": meta}))
    out = Tokeniser(None).tokenise_request("chat.completions", {"model": "m", "messages": ({"role": "user", "content": f"mail {EMAIL}"},), "stop": ("a", "b")})
    assert json.loads(out.body_bytes)["stop"] == ["a", "b"] and EMAIL not in out.body_bytes.decode()


def test_tool_call_arguments_nested_past_pythons_stack_are_tokenised_as_text() -> None:
    arguments = '{"to": "' + EMAIL + '", "deep": ' + "[" * 5000 + "]" * 5000 + "}"
    body = {"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}]}]}
    out = Tokeniser(None).tokenise_request("chat.completions", body)
    sent = out.body["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert EMAIL not in sent and sent.startswith('{"to": "<EMAIL_1_')


class Redactor:
    def __init__(self) -> None:
        self.seen: list[tuple[bytes, str]] = []

    def __call__(self, data: bytes, media_type: str) -> tuple[bytes, str]:
        self.seen.append((data, media_type))
        return b"\x01\x02\x03", "image/png"


def test_redact_replaces_inline_images_in_every_shape_and_refuses_what_it_cannot_redact() -> None:
    redactor = Redactor()
    tokeniser = Tokeniser(None)
    out = tokeniser.tokenise_request("chat.completions", chat([{"type": "image_url", "image_url": {"url": PNG_DATA_URL, "detail": "low"}}]), media_policy="redact", redact_image=redactor)
    assert out.body["messages"][0]["content"][0] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AQID", "detail": "low"}}
    assert out.passthrough == [{"path": "/messages/0/content/0", "kind": "image-redacted"}] and redactor.seen == [(PNG, "image/png")]
    anthropic = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}}]}]}
    out = tokeniser.tokenise_request("messages", anthropic, media_policy="redact", redact_image=redactor)
    assert out.body["messages"][0]["content"][0]["source"] == {"type": "base64", "media_type": "image/png", "data": "AQID"}
    responses = {"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "image_url": PNG_DATA_URL, "detail": "auto"}]}]}
    out = tokeniser.tokenise_request("responses", responses, media_policy="redact", redact_image=redactor)
    assert out.body["input"][0]["content"][0]["image_url"] == "data:image/png;base64,AQID"
    refused = [
        (chat([{"type": "image_url", "image_url": {"url": "https://cdn.example.com/a.png"}}]), redactor, "image"),
        (chat([{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}]), redactor, "image"),
        (chat([{"type": "image_url", "image_url": {"url": PNG_DATA_URL}}]), None, "image"),
        (chat([{"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}]), redactor, "audio"),
    ]
    engine = Engine(names=None, device_key=lambda: KEY, media_policy="redact", redact_image=redactor)
    for body, redact, kind in refused:
        engine._redact_image = redact
        with pytest.raises(UnsupportedContentError) as raised:
            engine.prepare("chat.completions", body)
        assert raised.value.path == "/messages/0/content/0" and raised.value.kind == kind


def test_media_pass_refuses_a_remote_url_holding_an_identifier_in_any_member() -> None:
    engine = Engine(names=None, device_key=lambda: KEY, media_policy="pass")
    doc = {"type": "document", "source": {"type": "url", "url": f"https://files.example.com/{PHONE.replace(' ', '')}/cv.pdf"}}
    with pytest.raises(UnsupportedContentError) as raised:
        engine.prepare("messages", {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [doc]}]})
    assert raised.value.path == "/messages/0/content/0/source" and raised.value.kind == "document" and PHONE.replace(" ", "") not in str(raised.value)
    clean = {"type": "document", "source": {"type": "url", "url": "https://files.example.com/handbook.pdf"}}
    prepared = engine.prepare("messages", {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [clean]}]})
    assert prepared.passthrough == [{"path": "/messages/0/content/0/source", "kind": "document"}]
