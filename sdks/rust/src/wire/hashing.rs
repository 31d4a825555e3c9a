//! SHA-256 digests over the wire forms: text, JCS bytes, request bodies, envelopes, Merkle nodes (RFC 9162).

use super::jcs::{canonical_bytes, parse_json_bytes, JcsError};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub const GENESIS_PREV_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

pub fn hex(data: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(data.len() * 2);
    for b in data {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(&sha256(data))
}

pub fn jcs_sha256_hex(value: &Value) -> Result<String, JcsError> {
    Ok(sha256_hex(&canonical_bytes(value)?))
}

/// `egress_sha256` / `hash_upstream_request`: SHA-256 of the JCS form of a JSON body.
pub fn json_body_sha256_hex(body: &[u8]) -> Result<String, String> {
    let value = parse_json_bytes(body)?;
    jcs_sha256_hex(&value).map_err(|e| e.0)
}

/// SHA-256 hex of the JCS bytes of a whole envelope, signature included (the next receipt's prev_hash).
pub fn envelope_hash(envelope: &Value) -> Result<String, JcsError> {
    jcs_sha256_hex(envelope)
}

pub fn is_sha256_hex(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::String(s)) if is_hex_of_len(s, 64))
}

pub fn is_hex_of_len(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// SHA-256(0x00 || data): one log entry.
pub fn merkle_leaf_hash(data: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(data);
    h.finalize().into()
}

/// SHA-256(0x01 || left || right): an interior node.
pub fn merkle_node_hash(left: &[u8], right: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

pub fn empty_tree_root() -> [u8; 32] {
    sha256(b"")
}
