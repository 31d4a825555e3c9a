"""sdks/vectors merkle-proofs.json: RFC 9162 inclusion and consistency proofs on bare hashes (the transparency-dev/merkle
test data, every proof of the reference tree, and mutations that must all be rejected) answer `valid`."""

from __future__ import annotations

import pytest

from privacy_relay.verify.transparency import verify_consistency, verify_inclusion
from privacy_relay.wire.hashing import merkle_leaf_hash, merkle_node_hash

from .vectors import ids, load

MERKLE = load("merkle-proofs")


def _root(leaf_hashes: list[bytes]) -> bytes:
    if len(leaf_hashes) == 1:
        return leaf_hashes[0]
    k = 1
    while k * 2 < len(leaf_hashes):
        k *= 2
    return merkle_node_hash(_root(leaf_hashes[:k]), _root(leaf_hashes[k:]))


def test_reference_tree_leaves_and_roots() -> None:
    tree = MERKLE["reference_tree"]
    hashes = [merkle_leaf_hash(bytes.fromhex(leaf)) for leaf in tree["leaves"]]
    assert [h.hex() for h in hashes] == tree["leaf_hashes"]
    for entry in tree["roots"][1:]:
        assert _root(hashes[: entry["tree_size"]]).hex() == entry["root_hash"]
    assert MERKLE["source"]["imported"] == {"inclusion": 98, "consistency": 98}
    assert not [c for c in MERKLE["inclusion"] + MERKLE["consistency"] if c["origin"] == "mutation" and c["valid"]]


@pytest.mark.parametrize("case", MERKLE["inclusion"], ids=ids(MERKLE["inclusion"]))
def test_inclusion(case: dict) -> None:
    got = verify_inclusion(
        bytes.fromhex(case["leaf_hash"]),
        case["leaf_index"],
        case["tree_size"],
        [bytes.fromhex(p) for p in case["audit_path"]],
        bytes.fromhex(case["root_hash"]),
    )
    assert got is case["valid"]


@pytest.mark.parametrize("case", MERKLE["consistency"], ids=ids(MERKLE["consistency"]))
def test_consistency(case: dict) -> None:
    got = verify_consistency(
        case["first"],
        case["second"],
        bytes.fromhex(case["first_root"]),
        bytes.fromhex(case["second_root"]),
        [bytes.fromhex(p) for p in case["consistency_path"]],
    )
    assert got is case["valid"]
