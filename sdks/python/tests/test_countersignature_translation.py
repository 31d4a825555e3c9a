"""A countersignature of a translated call (the gateway rewrote the attested body into the provider's wire format)
may carry a hash_upstream_request other than egress_sha256, only with a well-formed `translation` member."""

from __future__ import annotations

from privacy_relay.verify.receipt import countersignature_shape_problem


def countersignature(**overrides: object) -> dict:
    base = {
        "v": "v3-countersignature",
        "alg": "ES256",
        "kid": "k",
        "iss": "http://127.0.0.1:8080",
        "jti": "0" * 32,
        "iat": 1_700_000_000,
        "timestamp": "2023-11-14T22:13:20.000Z",
        "attestation_jti": "1" * 32,
        "attestation_sha256": "a" * 64,
        "egress_sha256": "b" * 64,
        "provider": "anthropic",
        "model": "claude-haiku-4-5-20251001",
        "hash_upstream_request": "b" * 64,
        "hash_upstream_response": "d" * 64,
        "witness": "relayed",
        "receipt_jti": None,
        "sig": "x",
    }
    base.update(overrides)
    return base


def test_untranslated_hashes_must_match() -> None:
    assert countersignature_shape_problem(countersignature()) is None
    assert countersignature_shape_problem(countersignature(hash_upstream_request="c" * 64)) == (
        "hash_upstream_request must equal the attested egress_sha256"
    )


def test_a_translation_member_allows_the_translated_body_hash() -> None:
    translated = countersignature(hash_upstream_request="c" * 64, translation={"from": "openai", "to": "anthropic"})
    assert countersignature_shape_problem(translated) is None


def test_a_provider_format_the_verifier_does_not_know_is_accepted_upstream() -> None:
    # `to` is what went upstream: a provider's own format (Gemini's generateContent), or one added after this SDK.
    for to in ("gemini", "bedrock-converse", "anthropic"):
        translated = countersignature(hash_upstream_request="c" * 64, translation={"from": "openai", "to": to})
        assert countersignature_shape_problem(translated) is None


def test_a_malformed_translation_member_is_refused() -> None:
    for bad in (
        {"from": "openai", "to": "openai"},
        {"from": "openai"},
        "openai",
        None,
        # `from` is the relay route's format: only a client format.
        {"from": "gemini", "to": "openai"},
        # `to` must be a wire-format name.
        {"from": "openai", "to": "Gemini"},
        {"from": "openai", "to": ""},
        {"from": "openai", "to": "x" * 33},
        {"from": "openai", "to": 7},
    ):
        problem = countersignature_shape_problem(countersignature(hash_upstream_request="c" * 64, translation=bad))
        assert problem == "translation must be { from, to } naming two different wire formats"
