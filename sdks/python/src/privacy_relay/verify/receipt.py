"""Offline verification of every envelope the gateway hands out (v1, v2, failed v2, the v3 countersignature)
and of client v3 attestations. Five checks, always in this order with these labels; the first failure decides
`reason` ("<label>: <detail>"); checks after it are "skipped". Old receipts stay valid: freshness rejects only
the future, because historic receipts must verify indefinitely."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..attestation import v3_envelope_shape_problem, verify_v3_signature
from ..wire.base64 import b64url_decode
from ..wire.ecdsa import verify_raw
from ..wire.envelope import signing_input
from ..wire.hashing import GENESIS_PREV_HASH, envelope_hash, is_sha256_hex
from ._js import MISSING, is_count, is_number, is_safe_integer, js_string
from .envelope_input import decode_envelope_input, envelope_or_raw
from .jwks import JwksOption, key_resolver_of

CHECK_LABELS: tuple[str, ...] = (
    "schema valid (OpenReceipt v1)",
    "algorithm allow-listed",
    "freshness (iat, nbf, exp)",
    "signature",
    "chain linkage (seq and prev_hash)",
)
RECEIPT_MAX_SKEW_SECONDS = 300
_SKIPPED = "not evaluated: an earlier check failed"


@dataclass(frozen=True)
class VerificationCheck:
    label: str
    status: str  # "ok" | "fail" | "skipped"
    detail: str


@dataclass(frozen=True)
class VerificationResult:
    valid: bool
    reason: Optional[str]
    checks: tuple[VerificationCheck, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return self.valid


_EXPECTED_ALG = {"v1": "ecdsa-p256-sha256", "v2": "ES256", "v2-failed": "ES256", "v3": "ecdsa-p256-sha256", "v3-countersignature": "ES256"}
_CHAIN_ID_PREFIX = {"v1": "tenant-", "v2": "receipt-v2-org-", "v2-failed": "failed-v2-org-"}
_RFC3339_MILLIS_UTC = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
_HEX32 = re.compile(r"[0-9a-f]{32}")
# Receipts name wire formats (docs/receipts.md): `from` a client format, `to` any well-formed wire-format name.
_CLIENT_WIRE_FORMATS = ("openai", "anthropic", "openai-responses")
_WIRE_FORMAT_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")


def _get(e: dict, key: str) -> Any:
    return e[key] if key in e else MISSING


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _non_empty(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def _hash_or_null(v: Any) -> bool:
    return v is None or is_sha256_hex(v)


def _str_or_null(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _common_problem(e: dict) -> str | None:
    if not _is_str(_get(e, "alg")):
        return "alg must be a string"
    if not _non_empty(_get(e, "kid")):
        return "kid must be a non-empty string"
    if not _non_empty(_get(e, "iss")):
        return "iss must be a non-empty string"
    if not _is_str(_get(e, "jti")) or not _HEX32.fullmatch(e["jti"]):
        return "jti must be 32 lowercase hex"
    if not is_count(_get(e, "iat")):
        return "iat must be a non-negative integer (Unix seconds)"
    if "nbf" in e and not is_safe_integer(e["nbf"]):
        return "nbf must be an integer when present"
    if "exp" in e and not is_safe_integer(e["exp"]):
        return "exp must be an integer when present"
    chain = _get(e, "chain")
    if not isinstance(chain, dict):
        return "chain must be an object"
    if not _non_empty(_get(chain, "chain_id")):
        return "chain.chain_id must be a non-empty string"
    if not is_number(_get(chain, "seq")):
        return "chain.seq must be a number"
    if not _is_str(_get(chain, "prev_hash")):
        return "chain.prev_hash must be a string"
    if not _non_empty(_get(e, "sig")):
        return "sig must be a non-empty string"
    return None


def _v2_problem(e: dict, failed: bool) -> str | None:
    common = _common_problem(e)
    if common is not None:
        return common
    if not _non_empty(_get(e, "signature")):
        return "signature must be a non-empty string"
    if not _is_str(_get(e, "timestamp")) or not _RFC3339_MILLIS_UTC.fullmatch(e["timestamp"]):
        return "timestamp must be RFC 3339 UTC with milliseconds"
    ext = _get(e, "extensions")
    if not isinstance(ext, dict) or not _is_str(_get(ext, "request_id")):
        return "extensions.request_id must be a string"
    if failed:
        status = _get(e, "status")
        if not is_safe_integer(status) or status < 400 or status > 599:
            return "status must be an HTTP error status (400-599)"
        if not _non_empty(_get(e, "error_code")):
            return "error_code must be a non-empty string"
        if "input_tokens" in e or "output_tokens" in e:
            return "a failed receipt carries no token counts"
        for member in ("request_id", "provider", "model"):
            if not _str_or_null(e.get(member)):
                return f"{member} must be a string or null"
        if not _hash_or_null(e.get("hash_upstream_request")):
            return "hash_upstream_request must be 64 lowercase hex or null"
        if not _hash_or_null(e.get("hash_upstream_response")):
            return "hash_upstream_response must be 64 lowercase hex or null"
        return None
    if not _is_str(_get(e, "request_id")):
        return "request_id must be a string"
    if not _non_empty(_get(e, "provider")):
        return "provider must be a non-empty string"
    if not _non_empty(_get(e, "model")):
        return "model must be a non-empty string"
    if not is_count(_get(e, "input_tokens")):
        return "input_tokens must be a non-negative integer"
    if not is_count(_get(e, "output_tokens")):
        return "output_tokens must be a non-negative integer"
    if not is_sha256_hex(_get(e, "hash_upstream_request")):
        return "hash_upstream_request must be 64 lowercase hex"
    if not is_sha256_hex(_get(e, "hash_upstream_response")):
        return "hash_upstream_response must be 64 lowercase hex"
    if "routing_decision" in e:
        r = e["routing_decision"]
        if not isinstance(r, dict):
            return "routing_decision must be an object when present"
        for member in ("from", "to", "chosen_model", "classifier", "strategy"):
            if not _is_str(_get(r, member)):
                return f"routing_decision.{member} must be a string"
        if not is_number(_get(r, "savings_pct")):
            return "routing_decision.savings_pct must be a number"
        if "provider_id" in r:
            return "routing_decision has no provider_id member"
    return None


def _v1_problem(e: dict) -> str | None:
    common = _common_problem(e)
    if common is not None:
        return common
    if not _non_empty(_get(e, "sub")):
        return "sub must be a non-empty string"
    c = _get(e, "claims")
    if not isinstance(c, dict):
        return "claims must be an object"
    for member in ("capability", "provider", "model", "tokenisation_mode"):
        if not _non_empty(_get(c, member)):
            return f"claims.{member} must be a non-empty string"
    if not is_count(_get(c, "tokens_in")):
        return "claims.tokens_in must be a non-negative integer"
    if not is_count(_get(c, "tokens_out")):
        return "claims.tokens_out must be a non-negative integer"
    if not is_sha256_hex(_get(c, "hash_upstream_request")):
        return "claims.hash_upstream_request must be 64 lowercase hex"
    if not is_sha256_hex(_get(c, "hash_upstream_response")):
        return "claims.hash_upstream_response must be 64 lowercase hex"
    r = _get(c, "routing_decision")
    if r is not None:
        if not isinstance(r, dict):
            return "claims.routing_decision must be an object or null"
        for member in ("from", "to", "chosen_model", "strategy", "classifier"):
            if not _is_str(_get(r, member)):
                return f"claims.routing_decision.{member} must be a string"
    if not _str_or_null(_get(c, "engine_version")):
        return "claims.engine_version must be a string or null"
    return None


def countersignature_shape_problem(e: dict) -> str | None:
    if not _is_str(_get(e, "alg")):
        return "alg must be a string"
    for member in ("kid", "iss", "provider", "model", "sig"):
        if not _non_empty(_get(e, member)):
            return f"{member} must be a non-empty string"
    for member in ("jti", "attestation_jti"):
        if not _is_str(_get(e, member)) or not _HEX32.fullmatch(e[member]):
            return f"{member} must be 32 lowercase hex"
    if not is_safe_integer(_get(e, "iat")) or e["iat"] < 0:
        return "iat must be a non-negative integer (Unix seconds)"
    if not _is_str(_get(e, "timestamp")) or not _RFC3339_MILLIS_UTC.fullmatch(e["timestamp"]):
        return "timestamp must be RFC 3339 UTC with milliseconds"
    for member in ("attestation_sha256", "egress_sha256", "hash_upstream_request", "hash_upstream_response"):
        if not is_sha256_hex(_get(e, member)):
            return f"{member} must be 64 lowercase hex"
    translation = _get(e, "translation")
    if translation is not MISSING:
        # The gateway translated the body into the provider's wire format: the relayed body's hash differs. `from` is
        # a client format (the relay route's); `to` any wire-format name (a provider's own format, like "gemini"), so a
        # gateway that learns a new provider format does not make this verifier reject its receipts.
        if (
            not isinstance(translation, dict)
            or translation.get("from") not in _CLIENT_WIRE_FORMATS
            or not _is_str(translation.get("to"))
            or not _WIRE_FORMAT_NAME.fullmatch(translation["to"])
            or translation.get("from") == translation.get("to")
        ):
            return "translation must be { from, to } naming two different wire formats"
    elif e["egress_sha256"] != e["hash_upstream_request"]:
        return "hash_upstream_request must equal the attested egress_sha256"
    if _get(e, "witness") not in ("relayed", "asserted"):
        return 'witness must be "relayed" or "asserted"'
    rj = _get(e, "receipt_jti")
    if rj is not None and (not _is_str(rj) or not _HEX32.fullmatch(rj)):
        return "receipt_jti must be 32 lowercase hex or null"
    return None


def _classify(value: Any) -> tuple[str, dict] | str:
    if not isinstance(value, dict):
        return "envelope is not a JSON object"
    v = _get(value, "v")
    if is_number(v) and v == 2:
        outcome = _get(value, "outcome")
        if outcome is not MISSING and outcome != "failed":
            return 'outcome must be "failed" when present'
        kind = "v2-failed" if outcome == "failed" else "v2"
        problem = _v2_problem(value, kind == "v2-failed")
    elif v == "v1":
        kind, problem = "v1", _v1_problem(value)
    elif v == "v3":
        kind, problem = "v3", v3_envelope_shape_problem(value)
    elif v == "v3-countersignature":
        kind, problem = "v3-countersignature", countersignature_shape_problem(value)
    else:
        return 'unknown envelope version (v must be "v1", 2, "v3" or "v3-countersignature")'
    return (kind, value) if problem is None else f"{kind} envelope: {problem}"


def _freshness(e: dict, now: int) -> tuple[bool, str]:
    iat = e["iat"]
    if iat > now + RECEIPT_MAX_SKEW_SECONDS:
        return False, f"iat is {js_string(iat - now)} s in the future (more than {RECEIPT_MAX_SKEW_SECONDS} s)"
    nbf, exp = _get(e, "nbf"), _get(e, "exp")
    if is_number(nbf) and now + RECEIPT_MAX_SKEW_SECONDS < nbf:
        return False, "not yet valid (nbf)"
    if is_number(exp) and now >= exp:
        return False, "expired (exp)"
    return True, "iat not in the future" + ("; nbf/exp respected" if nbf is not MISSING or exp is not MISSING else "")


def _signature(kind: str, e: dict, resolve: Callable[[str], Any], key_errors: list) -> tuple[bool, str]:
    if kind == "v3":
        return (True, "verified with the embedded attester_public_key") if verify_v3_signature(e) else (
            False,
            "does not verify with the embedded attester_public_key",
        )
    if kind in ("v2", "v2-failed") and e.get("signature") != e.get("sig"):
        return False, "signature and sig differ"
    try:
        signature = b64url_decode(e["sig"])
    except ValueError:
        return False, "sig is not base64url without padding"
    if len(signature) != 64:
        return False, "sig is not a 64-byte raw r||s signature"
    try:
        key = resolve(e["kid"])
    except Exception as error:  # noqa: BLE001 - reported, then re-raised by verify_receipt
        key_errors.append(error)
        return False, "verification key lookup failed"
    if key is None:
        return False, f"no published verification key has kid {e['kid']}"
    if verify_raw(key, signature, signing_input(e)):
        return True, f"verified with key {e['kid']}"
    return False, f"does not verify with key {e['kid']}"


def _attestation_binding(e: dict, attestation: Any) -> tuple[bool, str]:
    if attestation is MISSING:
        return True, f"countersigns attestation {e['attestation_jti']}; attestation not supplied, binding not compared"
    if not isinstance(attestation, dict):
        return False, "the supplied attestation is not an envelope"
    if _get(attestation, "jti") != e["attestation_jti"]:
        return False, f"countersigns attestation {e['attestation_jti']}, not {js_string(_get(attestation, 'jti'))}"
    if envelope_hash(attestation) != e["attestation_sha256"]:
        return False, "attestation_sha256 is not the hash of the supplied attestation"
    return True, f"countersigns the supplied attestation {e['attestation_jti']}"


def _chain_linkage(kind: str, e: dict, previous: Any, attestation: Any) -> tuple[bool, str]:
    if kind == "v3":
        return True, "not applicable: v3 attestations are client-signed and not chained"
    if kind == "v3-countersignature":
        return _attestation_binding(e, attestation)
    chain = e["chain"]
    prefix = _CHAIN_ID_PREFIX[kind]
    if not chain["chain_id"].startswith(prefix) or len(chain["chain_id"]) == len(prefix):
        return False, f"chain_id of a {kind} receipt must be {prefix}<id>"
    seq = chain["seq"]
    if not is_safe_integer(seq) or seq < 1:
        return False, "seq must be a positive integer"
    if not is_sha256_hex(chain["prev_hash"]):
        return False, "prev_hash must be 64 lowercase hex"
    if seq == 1 and chain["prev_hash"] != GENESIS_PREV_HASH:
        return False, "seq 1 must carry the genesis prev_hash"
    if seq > 1 and chain["prev_hash"] == GENESIS_PREV_HASH:
        return False, "only seq 1 may carry the genesis prev_hash"
    seq_text = js_string(seq)
    if previous is MISSING:
        return True, f"seq {seq_text}; previous receipt not supplied, link not compared"
    if not isinstance(previous, dict) or not isinstance(previous.get("chain"), dict):
        return False, "the supplied previous receipt has no chain"
    before = previous["chain"]
    if _get(before, "chain_id") != chain["chain_id"]:
        return False, "previous receipt belongs to another chain"
    before_seq = _get(before, "seq")
    if not (is_number(before_seq) and before_seq == seq - 1):
        return False, f"seq {seq_text} does not follow previous seq {js_string(before_seq)}"
    if envelope_hash(previous) != chain["prev_hash"]:
        return False, "prev_hash is not the hash of the previous receipt"
    return True, f"seq {seq_text} follows seq {js_string(seq - 1)} and prev_hash matches"


def verify_envelope(
    envelope: Any,
    *,
    resolve_key: Callable[[str], Any],
    now_seconds: int,
    previous: Any = MISSING,
    attestation: Any = MISSING,
) -> VerificationResult:
    """Verifies one decoded envelope. Never raises except when `resolve_key` raises (re-raised: nothing verified)."""
    checks: list[VerificationCheck] = []
    failure: list[VerificationCheck] = []

    def record(label: str, outcome: tuple[bool, str]) -> bool:
        check = VerificationCheck(label, "ok" if outcome[0] else "fail", outcome[1])
        checks.append(check)
        if not outcome[0]:
            failure.append(check)
        return outcome[0]

    def finish() -> VerificationResult:
        for label in CHECK_LABELS[len(checks):]:
            checks.append(VerificationCheck(label, "skipped", _SKIPPED))
        reason = f"{failure[0].label}: {failure[0].detail}" if failure else None
        return VerificationResult(not failure, reason, tuple(checks))

    classified = _classify(envelope)
    if isinstance(classified, str):
        record(CHECK_LABELS[0], (False, classified))
        return finish()
    kind, e = classified
    record(CHECK_LABELS[0], (True, f"{kind} envelope"))
    alg = e["alg"]
    if not record(CHECK_LABELS[1], (True, alg) if alg == _EXPECTED_ALG[kind] else (False, f"{alg} is not allowed for {kind}; expected {_EXPECTED_ALG[kind]}")):
        return finish()
    if not record(CHECK_LABELS[2], _freshness(e, now_seconds)):
        return finish()
    key_errors: list = []
    ok = record(CHECK_LABELS[3], _signature(kind, e, resolve_key, key_errors))
    if key_errors:
        raise key_errors[0]
    if not ok:
        return finish()
    try:
        record(CHECK_LABELS[4], _chain_linkage(kind, e, previous, attestation))
    except (TypeError, ValueError):
        record(CHECK_LABELS[4], (False, "the previous receipt or the attestation cannot be canonicalised"))
    return finish()


def _undecodable(problem: str) -> VerificationResult:
    checks = [VerificationCheck(CHECK_LABELS[0], "fail", problem)] + [VerificationCheck(label, "skipped", _SKIPPED) for label in CHECK_LABELS[1:]]
    return VerificationResult(False, f"{CHECK_LABELS[0]}: {problem}", tuple(checks))


def verify_receipt(
    header_value_or_envelope: Any,
    jwks: JwksOption,
    *,
    now_seconds: int | None = None,
    previous: Any = MISSING,
    attestation: Any = MISSING,
) -> VerificationResult:
    """Verifies a v1, v2, failed or v3-countersignature receipt (or a v3 attestation) offline.

    `header_value_or_envelope`: the X-Service-Receipt-* header value, JSON text, or the decoded object.
    `jwks`: the gateway's JWKS (a dict) or a JwksCache. An invalid receipt is a result, not an exception; only
    missing keys raise (JwksError), because then nothing was verified.
    """
    resolve = key_resolver_of(jwks)
    ok, decoded = decode_envelope_input(header_value_or_envelope)
    if not ok:
        return _undecodable(decoded)
    return verify_envelope(
        decoded,
        resolve_key=resolve,
        now_seconds=int(time.time()) if now_seconds is None else now_seconds,
        previous=MISSING if previous is MISSING or previous is None else envelope_or_raw(previous),
        attestation=MISSING if attestation is MISSING or attestation is None else envelope_or_raw(attestation),
    )
