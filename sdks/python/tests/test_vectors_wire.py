"""sdks/vectors jcs.json, sha256.json and attestation.json `build`: byte for byte."""

from __future__ import annotations

import json

import pytest

from privacy_relay.attestation import EngineIdentity, build_attestation, encode_attestation_header
from privacy_relay.wire.base64 import b64url_encode
from privacy_relay.wire.ecdsa import SigningKey, jwk_thumbprint
from privacy_relay.wire.envelope import signing_input
from privacy_relay.wire.hashing import empty_tree_root, json_body_sha256_hex, merkle_leaf_hash, merkle_node_hash, sha256_hex
from privacy_relay.wire.jcs import canonical_bytes, canonical_string

from .vectors import ids, load

JCS = load("jcs")["cases"]
ATTESTATION = load("attestation")


@pytest.mark.parametrize("case", JCS, ids=ids(JCS))
def test_jcs_canonical_form_is_byte_for_byte_the_vector(case: dict) -> None:
    assert canonical_bytes(json.loads(case["input"])) == case["canonical"].encode("utf-8")


def test_jcs_refuses_values_json_cannot_represent() -> None:
    for bad in (float("nan"), float("inf"), {1: "x"}, object(), "\ud800"):
        with pytest.raises((TypeError, ValueError)):
            canonical_string(bad)


def test_sha256_of_text_bodies_and_merkle_nodes() -> None:
    vectors = load("sha256")
    for case in vectors["text"]:
        assert case["text"].encode("utf-8").hex() == case["utf8_hex"]
        assert sha256_hex(case["text"]) == case["sha256"]
    for case in vectors["json_body"]:
        assert json_body_sha256_hex(case["body"].encode("utf-8")) == case["sha256"], case["name"]
    merkle = vectors["merkle"]
    assert empty_tree_root().hex() == merkle["empty_tree_root"]
    for leaf in merkle["leaf"]:
        assert merkle_leaf_hash(bytes.fromhex(leaf["data_hex"])).hex() == leaf["leaf_hash"]
    for node in merkle["node"]:
        assert merkle_node_hash(bytes.fromhex(node["left_hex"]), bytes.fromhex(node["right_hex"])).hex() == node["node_hash"]


def test_fixed_device_key_derives_the_vector_jwk_and_kid() -> None:
    device = ATTESTATION["device_key"]
    key = SigningKey.from_private_jwk(device["private_jwk"])
    assert key.d.to_bytes(32, "big").hex() == device["d_hex"]
    assert key.public_jwk == device["public_jwk"]
    assert key.private_jwk == device["private_jwk"]
    assert jwk_thumbprint(device["public_jwk"]) == device["kid"]


@pytest.mark.parametrize("case", ATTESTATION["build"], ids=ids(ATTESTATION["build"]))
def test_attestation_build_reproduces_envelope_signature_and_header(case: dict) -> None:
    key = SigningKey.from_private_jwk(ATTESTATION["device_key"]["private_jwk"])
    given = case["input"]
    envelope = build_attestation(
        route=given["route"],
        body_bytes=given["body"].encode("utf-8"),
        detectors_fired=given["detectors_fired"],
        engine=EngineIdentity(**given["engine"]),
        key=key,
        trust_tier=given["trust_tier"],
        jti=given["jti"],
        iat=given["iat"],
        deterministic=True,
    )
    assert envelope["claims"]["v3-attestation"]["egress_sha256"] == case["egress_sha256"]
    assert signing_input(envelope).decode("utf-8") == case["signing_input"]
    assert json.dumps(envelope) == json.dumps(case["envelope"])  # same members, same order
    assert encode_attestation_header(envelope) == case["header"]


def test_randomised_signatures_differ_but_verify() -> None:
    key = SigningKey.from_private_jwk(ATTESTATION["device_key"]["private_jwk"])
    a, b = key.sign(b"x"), key.sign(b"x")
    assert a != b and len(a) == len(b) == 64
    assert b64url_encode(key.sign_deterministic(b"x")) == b64url_encode(key.sign_deterministic(b"x"))
