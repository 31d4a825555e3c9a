"""Transparency-log proofs checked offline (RFC 9162 Merkle tree): inclusion proofs against a signed tree head, and
consistency proofs between a tree head kept earlier and a newer one.

Inclusion checks, in order: "signed tree head", "proof schema", "leaf hash", "inclusion". Consistency checks, in
order: "old tree head", "new tree head", "proof schema", "consistency". The first failure decides `reason` and later
checks are "skipped"; reasons and details are the TypeScript SDK's, word for word (sdks/vectors/transparency.json)."""

from __future__ import annotations

import json
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
CONSISTENCY_CHECK_LABELS: tuple[str, ...] = ("old tree head", "new tree head", "proof schema", "consistency")
EMPTY_ROOT_HEX = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
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
    if len(leaf_hash) != 32 or len(root_hash) != 32:
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


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, proof: list[bytes]) -> bool:
    """RFC 9162 section 2.1.4.2: is the tree of `first` leaves with `first_root` a prefix of the tree of `second` leaves
    with `second_root`? Requires 1 <= first <= second (a proof from the empty tree proves nothing, as in
    transparency-dev/merkle); first == second needs an empty proof and equal roots."""
    if first < 1 or first > second:
        return False
    if first == second:
        return len(proof) == 0 and first_root == second_root
    if len(first_root) != 32 or len(second_root) != 32 or any(len(p) != 32 for p in proof):
        return False
    path = [first_root, *proof] if first & (first - 1) == 0 else list(proof)
    if not path:
        return False
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:
        fn //= 2
        sn //= 2
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = merkle_node_hash(c, fr)
            sr = merkle_node_hash(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn //= 2
                sn //= 2
        else:
            sr = merkle_node_hash(sr, c)
        fn //= 2
        sn //= 2
    return sn == 0 and fr == first_root and sr == second_root


def consistency_proof_shape_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "the proof is not a JSON object"
    if not is_count(value.get("first", MISSING)):
        return "first must be a non-negative integer"
    if not is_count(value.get("second", MISSING)):
        return "second must be a non-negative integer"
    path = value.get("consistency_path")
    if not isinstance(path, list) or not all(is_sha256_hex(p) for p in path):
        return "consistency_path must be an array of 64 lowercase hex"
    return None


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


def _js_json(value: Any) -> str:
    """JSON.stringify of a string."""
    return json.dumps(value, ensure_ascii=False)


def verify_consistency_proof(proof: Any, old_head: Any, jwks: JwksOption, *, new_head: Any = MISSING) -> VerificationResult:
    """Checks that `proof` (GET /api/v1/transparency/consistency?first=M) shows the log whose signed head you kept
    (`old_head`, tree size M) is a prefix of the log whose head is `new_head` (default: the head inside the proof):
    nothing you saw was removed or changed since. A smaller new head fails "proof schema" (a rollback), a fork fails
    "consistency". Raises only JwksError."""
    resolve = key_resolver_of(jwks)
    p = envelope_or_raw(proof)
    older = envelope_or_raw(old_head)
    checks: list[VerificationCheck] = []

    def record(label: str, outcome: tuple[bool, str]) -> bool:
        checks.append(VerificationCheck(label, "ok" if outcome[0] else "fail", outcome[1]))
        return outcome[0]

    def finish() -> VerificationResult:
        failure = next((c for c in checks if c.status == "fail"), None)
        for label in CONSISTENCY_CHECK_LABELS[len(checks):]:
            checks.append(VerificationCheck(label, "skipped", "not evaluated: an earlier check failed"))
        return VerificationResult(failure is None, None if failure is None else f"{failure.label}: {failure.detail}", tuple(checks))

    if not record("old tree head", _tree_head(older, resolve)):
        return finish()
    newer = envelope_or_raw(new_head) if new_head is not MISSING else (p.get("sth", MISSING) if isinstance(p, dict) else MISSING)
    outcome = _tree_head(newer, resolve)
    if outcome[0] and newer["iss"] != older["iss"]:
        outcome = (False, f"the new tree head is of the log {_js_json(newer['iss'])}, the old one of {_js_json(older['iss'])}")
    if not record("new tree head", outcome):
        return finish()

    def schema() -> tuple[bool, str]:
        if newer["tree_size"] < older["tree_size"]:
            return False, (
                f"the new tree head has {js_string(newer['tree_size'])} leaves, fewer than the {js_string(older['tree_size'])} "
                "of the old one: the log rolled back"
            )
        if older["tree_size"] == 0:
            if older["root_hash"] == EMPTY_ROOT_HEX:
                return True, "the old tree is empty: every tree extends it"
            return False, "the old tree head has 0 leaves but not the empty tree's root_hash"
        problem = consistency_proof_shape_problem(p)
        if problem is not None:
            return False, problem
        if p["first"] != older["tree_size"] or p["second"] != newer["tree_size"]:
            return False, (
                f"the proof is from tree size {js_string(p['first'])} to {js_string(p['second'])}, the tree heads are of "
                f"{js_string(older['tree_size'])} and {js_string(newer['tree_size'])}"
            )
        return True, f"from tree size {js_string(p['first'])} to {js_string(p['second'])}, {len(p['consistency_path'])} hashes"

    if not record("proof schema", schema()):
        return finish()
    if older["tree_size"] == 0:
        record("consistency", (True, f"not needed: the log of {js_string(newer['tree_size'])} leaves extends the empty log"))
        return finish()
    consistent = verify_consistency(
        int(p["first"]),
        int(p["second"]),
        bytes.fromhex(older["root_hash"]),
        bytes.fromhex(newer["root_hash"]),
        [bytes.fromhex(x) for x in p["consistency_path"]],
    )
    if consistent:
        detail = (
            f"the log of {js_string(p['second'])} leaves extends the log of {js_string(p['first'])} leaves: "
            f"root {older['root_hash']} to {newer['root_hash']}"
        )
    elif p["first"] == p["second"] and older["root_hash"] != newer["root_hash"]:
        detail = f"two different root hashes for tree size {js_string(p['first'])}: the log forked"
    else:
        detail = (
            f"the consistency path does not lead from root {older['root_hash']} to {newer['root_hash']}: "
            "the log forked or the proof is wrong"
        )
    record("consistency", (consistent, detail))
    return finish()
