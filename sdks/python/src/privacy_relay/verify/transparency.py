"""Transparency-log inclusion proofs checked offline against a signed tree head (RFC 9162 Merkle tree).

Checks, in order: "signed tree head", "proof schema", "leaf hash", "inclusion"; the first failure decides
`reason` and later checks are "skipped"."""

from __future__ import annotations

import re
from typing import Any, Callable

from ..wire.base64 import b64url_decode
from ..wire.ecdsa import verify_raw
from ..wire.envelope import signing_input
from ..wire.hashing import envelope_hash, is_sha256_hex, merkle_node_hash, receipt_leaf_hash
from ._js import MISSING, is_count, js_string
from .envelope_input import envelope_or_raw
from .jwks import JwksOption, key_resolver_of
from .receipt import VerificationCheck, VerificationResult

TRANSPARENCY_CHECK_LABELS: tuple[str, ...] = ("signed tree head", "proof schema", "leaf hash", "inclusion")
_HEX32 = re.compile(r"[0-9a-f]{32}")


def tree_head_shape_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "the tree head is not a JSON object"
    if value.get("v") != "transparency-sth-v1":
        return 'v must be "transparency-sth-v1"'
    if value.get("alg") != "ES256":
        return f"alg {js_string(value.get('alg', MISSING))} is not allowed; expected ES256"
    if not isinstance(value.get("kid"), str) or value["kid"] == "":
        return "kid must be a non-empty string"
    if not isinstance(value.get("iss"), str):
        return "iss must be a string"
    if not is_count(value.get("tree_size", MISSING)):
        return "tree_size must be a non-negative integer"
    if not is_sha256_hex(value.get("root_hash")):
        return "root_hash must be 64 lowercase hex"
    if not isinstance(value.get("timestamp"), str):
        return "timestamp must be a string"
    if not isinstance(value.get("sig"), str) or value["sig"] == "":
        return "sig must be a non-empty string"
    return None


def inclusion_proof_shape_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "the proof is not a JSON object"
    if not isinstance(value.get("receipt_id"), str) or not _HEX32.fullmatch(value["receipt_id"]):
        return "receipt_id must be 32 lowercase hex"
    if not is_count(value.get("leaf_index", MISSING)):
        return "leaf_index must be a non-negative integer"
    if not is_count(value.get("tree_size", MISSING)):
        return "tree_size must be a non-negative integer"
    if not is_sha256_hex(value.get("receipt_hash")):
        return "receipt_hash must be 64 lowercase hex"
    if not is_sha256_hex(value.get("leaf_hash")):
        return "leaf_hash must be 64 lowercase hex"
    path = value.get("audit_path")
    if not isinstance(path, list) or not all(is_sha256_hex(p) for p in path):
        return "audit_path must be an array of 64 lowercase hex"
    if value["leaf_index"] >= value["tree_size"]:
        return f"leaf_index {js_string(value['leaf_index'])} is not in a tree of {js_string(value['tree_size'])}"
    return None


def verify_inclusion(leaf_hash: bytes, index: int, tree_size: int, audit_path: list[bytes], root_hash: bytes) -> bool:
    """RFC 9162 section 2.1.3.2."""
    if index < 0 or index >= tree_size:
        return False
    fn, sn, r = int(index), int(tree_size) - 1, leaf_hash
    for p in audit_path:
        if len(p) != 32 or sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = merkle_node_hash(p, r)
            while fn % 2 == 0 and fn != 0:
                fn //= 2
                sn //= 2
        else:
            r = merkle_node_hash(r, p)
        fn //= 2
        sn //= 2
    return sn == 0 and r == root_hash


def _tree_head(sth: Any, resolve: Callable[[str], Any]) -> tuple[bool, str]:
    problem = tree_head_shape_problem(sth)
    if problem is not None:
        return False, problem
    try:
        signature = b64url_decode(sth["sig"])
    except ValueError:
        return False, "sig is not base64url without padding"
    key = resolve(sth["kid"])
    if key is None:
        return False, f"no published verification key has kid {sth['kid']}"
    if verify_raw(key, signature, signing_input(sth)):
        return True, f"tree size {js_string(sth['tree_size'])}, verified with key {sth['kid']}"
    return False, f"does not verify with key {sth['kid']}"


def verify_inclusion_proof(proof: Any, signed_tree_head: Any, jwks: JwksOption, *, receipt: Any = MISSING) -> VerificationResult:
    """Checks that `proof` proves its receipt is in the tree whose signed head is `signed_tree_head` (None: the
    head inside the proof); with `receipt`, also that the proof is about that receipt. Raises only JwksError."""
    resolve = key_resolver_of(jwks)
    p = envelope_or_raw(proof)
    head = (p.get("sth") if isinstance(p, dict) else None) if signed_tree_head is None else envelope_or_raw(signed_tree_head)
    supplied = MISSING if receipt is MISSING or receipt is None else envelope_or_raw(receipt)
    checks: list[VerificationCheck] = []

    def record(label: str, outcome: tuple[bool, str]) -> bool:
        checks.append(VerificationCheck(label, "ok" if outcome[0] else "fail", outcome[1]))
        return outcome[0]

    def finish() -> VerificationResult:
        failure = next((c for c in checks if c.status == "fail"), None)
        for label in TRANSPARENCY_CHECK_LABELS[len(checks):]:
            checks.append(VerificationCheck(label, "skipped", "not evaluated: an earlier check failed"))
        return VerificationResult(failure is None, None if failure is None else f"{failure.label}: {failure.detail}", tuple(checks))

    if not record("signed tree head", _tree_head(head, resolve)):
        return finish()
    problem = inclusion_proof_shape_problem(p)
    if problem is not None:
        record("proof schema", (False, problem))
        return finish()
    if not record(
        "proof schema",
        (True, f"leaf {js_string(p['leaf_index'])} of {js_string(p['tree_size'])}")
        if p["tree_size"] == head["tree_size"]
        else (False, f"the proof is for tree size {js_string(p['tree_size'])}, the tree head for {js_string(head['tree_size'])}"),
    ):
        return finish()

    def leaf() -> tuple[bool, str]:
        if receipt_leaf_hash(p["receipt_hash"]).hex() != p["leaf_hash"]:
            return False, "leaf_hash is not SHA-256(0x00 || receipt_hash)"
        if supplied is MISSING:
            return True, "receipt not supplied, receipt_hash not compared"
        if not isinstance(supplied, dict):
            return False, "the supplied receipt is not an envelope"
        if supplied.get("jti", MISSING) != p["receipt_id"]:
            return False, f"the proof is for receipt {p['receipt_id']}, not {js_string(supplied.get('jti', MISSING))}"
        try:
            if envelope_hash(supplied) != p["receipt_hash"]:
                return False, "receipt_hash is not the hash of the supplied receipt"
        except (TypeError, ValueError):
            return False, "the supplied receipt cannot be canonicalised"
        return True, f"receipt_hash is the hash of the supplied receipt {p['receipt_id']}"

    if not record("leaf hash", leaf()):
        return finish()
    included = verify_inclusion(
        bytes.fromhex(p["leaf_hash"]), p["leaf_index"], p["tree_size"], [bytes.fromhex(x) for x in p["audit_path"]], bytes.fromhex(head["root_hash"])
    )
    record("inclusion", (True, f"the audit path leads to root {head['root_hash']}") if included else (False, "the audit path does not lead to the tree head's root_hash"))
    return finish()
