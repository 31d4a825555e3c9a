"""SHA-256 digests over the wire forms: text, JCS bytes, request bodies, envelopes, Merkle nodes."""

from __future__ import annotations

import hashlib
from typing import Any

from .jcs import canonical_bytes, parse_json_bytes

GENESIS_PREV_HASH = "0" * 64


def sha256_hex(data: bytes | str) -> str:
    """SHA-256 as lowercase hex; a string is hashed as its UTF-8 bytes."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def jcs_sha256_hex(value: Any) -> str:
    return sha256_hex(canonical_bytes(value))


def json_body_sha256_hex(body: bytes) -> str:
    """`egress_sha256` / `hash_upstream_request`: SHA-256 of the JCS form of a JSON body. Raises when not JSON."""
    return jcs_sha256_hex(parse_json_bytes(body))


def envelope_hash(envelope: Any) -> str:
    """SHA-256 hex of the JCS bytes of a whole envelope, signature included (the next receipt's prev_hash)."""
    return jcs_sha256_hex(envelope)


def is_sha256_hex(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def merkle_leaf_hash(data: bytes) -> bytes:
    """SHA-256(0x00 || data): one log entry (RFC 9162)."""
    return hashlib.sha256(b"\x00" + data).digest()


def merkle_node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 || left || right): an interior node (RFC 9162)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def empty_tree_root() -> bytes:
    return hashlib.sha256(b"").digest()


def receipt_leaf_hash(envelope_hash_hex: str) -> bytes:
    return merkle_leaf_hash(bytes.fromhex(envelope_hash_hex))
