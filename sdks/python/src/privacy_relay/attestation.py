"""The v3 attestation: the envelope this device signs right before egress, proving the exact body sent was
tokenised by an official engine. Sent as X-Service-Attestation (standard padded base64 of the JSON)."""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

from .wire.base64 import b64url_decode, encode_json_header
from .wire.ecdsa import SigningKey, is_public_jwk, public_key_from_jwk, verify_raw
from .wire.envelope import sign_envelope, signing_input
from .wire.hashing import is_sha256_hex, json_body_sha256_hex

AttestationRoute = Literal["chat.completions", "messages", "embeddings", "responses", "messages.count_tokens"]
ATTESTATION_ROUTES: tuple[str, ...] = ("chat.completions", "messages", "embeddings", "responses", "messages.count_tokens")
DEFAULT_TRUST_TIER = "self-attested"


@dataclass(frozen=True)
class EngineIdentity:
    id: str
    version: str
    sha256: str

    @property
    def header_value(self) -> str:
        """The X-Service-Engine value: `<id>/<version>`."""
        return f"{self.id}/{self.version}"


def build_attestation(
    *,
    route: str,
    body_bytes: bytes,
    detectors_fired: Mapping[str, int],
    engine: EngineIdentity,
    key: SigningKey,
    trust_tier: str = DEFAULT_TRUST_TIER,
    jti: str | None = None,
    iat: int | None = None,
    deterministic: bool = False,
    passthrough: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """Signs the attestation for one egress body. Raises ValueError when `body_bytes` is not a JSON document.

    `passthrough`: what an opt-in (media_policy, passthrough_paths) let through untokenised, `[{path, kind}]` sorted
    by path, never values; the claim is absent when it is empty (sdks/vectors/README.md "Egress policy").

    `deterministic` signs with an RFC 6979 nonce (reproducible bytes, for fixtures); the default uses OpenSSL.
    """
    envelope: dict[str, Any] = {
        "v": "v3",
        "alg": "ecdsa-p256-sha256",
        "jti": jti if jti is not None else secrets.token_hex(16),
        "iat": iat if iat is not None else int(time.time()),
        "claims": {
            "v3-attestation": {
                "route": route,
                "egress_sha256": json_body_sha256_hex(body_bytes),
                "detectors_fired": dict(detectors_fired),
                "engine": {"id": engine.id, "version": engine.version, "sha256": engine.sha256},
                "trust_tier": trust_tier,
                "attester_public_key": key.public_jwk,
            }
        },
    }
    if passthrough:
        envelope["claims"]["v3-attestation"]["passthrough"] = [{"path": entry["path"], "kind": entry["kind"]} for entry in passthrough]
    envelope["sig"] = sign_envelope(envelope, key.sign_deterministic if deterministic else key.sign)
    return envelope


def encode_attestation_header(envelope: Mapping[str, Any]) -> str:
    return encode_json_header(envelope)


def _is_safe_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) <= 2**53 - 1
    return isinstance(value, float) and value.is_integer() and abs(value) <= 2**53 - 1


_JTI = re.compile(r"[0-9a-f]{32}")


def v3_envelope_shape_problem(value: Any) -> str | None:
    """Why `value` is not a v3 envelope, or None. Extra members are allowed (they are signed)."""
    if not isinstance(value, dict):
        return "envelope is not a JSON object"
    if value.get("v") != "v3":
        return 'v must be "v3"'
    if not isinstance(value.get("alg"), str):
        return "alg must be a string"
    if not isinstance(value.get("jti"), str) or not _JTI.fullmatch(value["jti"]):
        return "jti must be 32 lowercase hex"
    if not _is_safe_int(value.get("iat")):
        return "iat must be an integer (Unix seconds)"
    if not isinstance(value.get("sig"), str) or value["sig"] == "":
        return "sig must be a non-empty string"
    if not isinstance(value.get("claims"), dict):
        return "claims must be an object"
    claims = value["claims"].get("v3-attestation")
    if not isinstance(claims, dict):
        return "claims.v3-attestation must be an object"
    if claims.get("route") not in ATTESTATION_ROUTES:
        return f"route must be one of {', '.join(ATTESTATION_ROUTES)}"
    if not is_sha256_hex(claims.get("egress_sha256")):
        return "egress_sha256 must be 64 lowercase hex"
    if not isinstance(claims.get("detectors_fired"), dict):
        return "detectors_fired must be an object"
    for count in claims["detectors_fired"].values():
        if not _is_safe_int(count) or count < 0:
            return "detectors_fired counts must be non-negative integers"
    engine = claims.get("engine")
    if (
        not isinstance(engine, dict)
        or not isinstance(engine.get("id"), str)
        or engine["id"] == ""
        or not isinstance(engine.get("version"), str)
        or engine["version"] == ""
    ):
        return "engine must have id and version strings"
    if not is_sha256_hex(engine.get("sha256")):
        return "engine.sha256 must be 64 lowercase hex"
    if not isinstance(claims.get("trust_tier"), str) or claims["trust_tier"] == "":
        return "trust_tier must be a non-empty string"
    if not is_public_jwk(claims.get("attester_public_key")):
        return "attester_public_key must be an EC P-256 public JWK"
    return None


def verify_v3_signature(envelope: Mapping[str, Any]) -> bool:
    """The envelope's `sig` against its embedded attester_public_key. Never raises."""
    try:
        key = public_key_from_jwk(envelope["claims"]["v3-attestation"]["attester_public_key"])
        return verify_raw(key, b64url_decode(envelope["sig"]), signing_input(envelope))
    except (ValueError, KeyError, TypeError):
        return False
