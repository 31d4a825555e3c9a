"""The engine beyond the vectors: request shapes, fail-closed and fail-open name models, the attestation it signs,
long digit-group runs handled without stalling."""

from __future__ import annotations

import json

import pytest

from privacy_relay.attestation import verify_v3_signature
from privacy_relay.engine import ENGINE, Engine, engine_source_sha256, name_model_of
from privacy_relay.errors import InvalidRequestError, NameModelUnavailableError
from privacy_relay.tokeniser.names import NameModelUnavailable
from privacy_relay.tokeniser.session import TokeniserSession
from privacy_relay.tokeniser.tokenise import Tokeniser
from privacy_relay.wire.base64 import decode_json_header
from privacy_relay.wire.ecdsa import SigningKey
from privacy_relay.wire.hashing import json_body_sha256_hex

KEY = SigningKey.generate()


class Broken:
    def detect(self, text: str):
        raise RuntimeError("model crashed")


def test_prepare_signs_the_exact_bytes_it_sends_as_relay_py() -> None:
    prepared = Engine(names=None, device_key=lambda: KEY).prepare(
        "messages", {"model": "m", "system": "Reply to bob@example.net", "messages": [{"role": "user", "content": [{"type": "text", "text": "Call +44 20 7946 0958"}]}]}
    )
    envelope = decode_json_header(prepared.headers["x-service-attestation"])
    claims = envelope["claims"]["v3-attestation"]
    assert prepared.headers["x-service-engine"] == "relay-py/0.1.0" == f"{ENGINE.id}/{ENGINE.version}"
    assert claims["engine"] == {"id": "relay-py", "version": "0.1.0", "sha256": engine_source_sha256()}
    assert claims["route"] == "messages" and claims["detectors_fired"] == {"EMAIL": 1, "PHONE": 1}
    assert claims["egress_sha256"] == json_body_sha256_hex(prepared.body_bytes)
    assert claims["attester_public_key"] == KEY.public_jwk and verify_v3_signature(envelope)
    sent = json.loads(prepared.body_bytes)
    assert "bob@example.net" not in prepared.body_bytes.decode() and "7946" not in prepared.body_bytes.decode()
    assert sent == prepared.tokenised_body and set(prepared.map.values()) == {"bob@example.net", "+44 20 7946 0958"}


def test_bodies_the_engine_cannot_read_are_invalid_requests_and_nothing_is_signed() -> None:
    engine = Engine(names=None, device_key=lambda: KEY)
    for body in ([], {"model": "m", "messages": "hi"}, {"model": "m", "temperature": float("nan"), "messages": [{"role": "user", "content": "hi"}]}):
        with pytest.raises(InvalidRequestError) as raised:
            engine.prepare("chat.completions", body)
        assert raised.value.code == "invalid_request" and raised.value.status == 0


def test_a_failing_name_model_fails_closed_unless_fail_open() -> None:
    with pytest.raises(NameModelUnavailableError) as raised:
        Engine(names=Broken(), device_key=lambda: KEY).prepare("chat.completions", {"model": "m", "messages": [{"role": "user", "content": "Hi Jane"}]})
    assert raised.value.code == "name_model_unavailable"
    with pytest.raises(NameModelUnavailable):
        Tokeniser(Broken()).tokenise_text("Hi Jane, mail jane@example.com", TokeniserSession())
    session = TokeniserSession()
    out = Tokeniser(Broken(), fail_open=True).tokenise_text("Hi Jane, mail jane@example.com", session)
    assert "jane@example.com" not in out and "Jane" in out and session.name_model_skipped


def test_name_model_settings() -> None:
    assert name_model_of("off") is None and name_model_of(None) is None
    assert type(name_model_of("builtin")).__name__ == "BuiltinNameModel"
    assert name_model_of("http://127.0.0.1:9/v1/entities").url == "http://127.0.0.1:9/v1/entities"


def test_builtin_names_gazetteer_titles_greetings_and_labels() -> None:
    tokeniser = Tokeniser(name_model_of("builtin"))
    # The same names the TypeScript engine's built-in model (the portable name model) finds in this text.
    text = "Dear Willemijn,\nMevr. de Vries and Herr Oberhuber met in Paris.\nName: Lucía Fernández\n"
    names = [text[s.start:s.end] for s in tokeniser.detect_spans(text) if s.type == "PERSON"]
    assert names == ["Willemijn", "de Vries", "Oberhuber", "Lucía Fernández"]
    assert "Paris" not in names


def test_a_long_run_of_digit_groups_is_scanned_once_and_its_cards_found() -> None:
    # 3,000 two-digit groups: every window is judged once (the search for the longest valid window used to
    # start over for every range, which never finished on such input).
    text = "Card 4111 1111 1111 1111 then " + "12 " * 3_000 + "and 5500 0000 0000 0004, 4111 1111 1111 1111 2."
    spans = Tokeniser(None).detect_spans(text)
    assert [(text[s.start:s.end], s.type) for s in spans if s.type == "CARD"] == [("4111 1111 1111 1111", "CARD"), ("5500 0000 0000 0004", "CARD"), ("4111 1111 1111 1111", "CARD")]


def test_a_call_with_an_idempotency_key_tokenises_to_the_same_bytes_every_time_and_other_keys_do_not() -> None:
    engine = Engine(names=None, device_key=lambda: KEY, stable_alias_secret=lambda: b"\x07" * 32)
    body = {"model": "m", "messages": [{"role": "user", "content": "Invoice for bob@example.net"}]}
    first = engine.prepare("chat.completions", body, "order-1")
    retry = engine.prepare("chat.completions", body, "order-1")
    other = engine.prepare("chat.completions", body, "order-2")
    unkeyed = [engine.prepare("chat.completions", body) for _ in range(2)]
    assert retry.body_bytes == first.body_bytes and retry.map == first.map
    assert other.body_bytes != first.body_bytes
    assert unkeyed[0].body_bytes != unkeyed[1].body_bytes
    assert b"bob@example.net" not in first.body_bytes
    # Without a device alias secret there is nothing to derive from: fresh aliases, as without a key.
    bare = Engine(names=None, device_key=lambda: KEY)
    assert bare.prepare("chat.completions", body, "order-1").body_bytes != bare.prepare("chat.completions", body, "order-1").body_bytes


def test_builtin_names_leave_person_like_words_alone_and_find_signatures_and_json_keys() -> None:
    tokeniser = Tokeniser(name_model_of("builtin"))
    for text in ("The Grace Period ends on Friday.", "Crystal Palace won again.", "We parked near Victoria Station.", "Johnson & Johnson reported."):
        assert [s for s in tokeniser.detect_spans(text) if s.type == "PERSON"] == [], text
    text = '{"firstname": "Mei", "lastName": "Okonkwo"}\n\nMit freundlichen Grüßen\nAnneliese Brandenstein'
    assert [text[s.start:s.end] for s in tokeniser.detect_spans(text) if s.type == "PERSON"] == ["Mei", "Okonkwo", "Anneliese Brandenstein"]
