//! Transparency-log inclusion proofs checked offline against a signed tree head (RFC 9162 Merkle tree).
//! Checks, in order: "signed tree head", "proof schema", "leaf hash", "inclusion".

use super::js::*;
use super::jwks::{JwksError, KeyResolver};
use super::receipt::{envelope_or_raw, Recorder, VerificationResult};
use crate::wire::b64::b64url_decode;
use crate::wire::ecdsa::verify_raw;
use crate::wire::hashing::{envelope_hash, hex, is_hex_of_len, is_sha256_hex, merkle_leaf_hash, merkle_node_hash, unhex};
use crate::wire::signing_input;
use serde_json::Value;

pub const TRANSPARENCY_CHECK_LABELS: [&str; 4] = ["signed tree head", "proof schema", "leaf hash", "inclusion"];

pub fn tree_head_shape_problem(value: &Value) -> Option<String> {
    if !value.is_object() {
        return Some("the tree head is not a JSON object".into());
    }
    if str_of(value.get("v")) != Some("transparency-sth-v1") {
        return Some("v must be \"transparency-sth-v1\"".into());
    }
    if str_of(value.get("alg")) != Some("ES256") {
        return Some(format!("alg {} is not allowed; expected ES256", js_string(value.get("alg"))));
    }
    if !non_empty(value.get("kid")) {
        return Some("kid must be a non-empty string".into());
    }
    if !is_str(value.get("iss")) {
        return Some("iss must be a string".into());
    }
    if !is_count(value.get("tree_size")) {
        return Some("tree_size must be a non-negative integer".into());
    }
    if !is_sha256_hex(value.get("root_hash")) {
        return Some("root_hash must be 64 lowercase hex".into());
    }
    if !is_str(value.get("timestamp")) {
        return Some("timestamp must be a string".into());
    }
    if !non_empty(value.get("sig")) {
        return Some("sig must be a non-empty string".into());
    }
    None
}

pub fn inclusion_proof_shape_problem(value: &Value) -> Option<String> {
    if !value.is_object() {
        return Some("the proof is not a JSON object".into());
    }
    if !matches!(str_of(value.get("receipt_id")), Some(s) if is_hex_of_len(s, 32)) {
        return Some("receipt_id must be 32 lowercase hex".into());
    }
    if !is_count(value.get("leaf_index")) {
        return Some("leaf_index must be a non-negative integer".into());
    }
    if !is_count(value.get("tree_size")) {
        return Some("tree_size must be a non-negative integer".into());
    }
    if !is_sha256_hex(value.get("receipt_hash")) {
        return Some("receipt_hash must be 64 lowercase hex".into());
    }
    if !is_sha256_hex(value.get("leaf_hash")) {
        return Some("leaf_hash must be 64 lowercase hex".into());
    }
    match value.get("audit_path") {
        Some(Value::Array(items)) if items.iter().all(|p| is_sha256_hex(Some(p))) => {}
        _ => return Some("audit_path must be an array of 64 lowercase hex".into()),
    }
    if num(value.get("leaf_index")) >= num(value.get("tree_size")) {
        return Some(format!(
            "leaf_index {} is not in a tree of {}",
            js_string(value.get("leaf_index")),
            js_string(value.get("tree_size"))
        ));
    }
    None
}

/// RFC 9162 section 2.1.3.2.
pub fn verify_inclusion(leaf_hash: &[u8], index: u64, tree_size: u64, audit_path: &[Vec<u8>], root_hash: &[u8]) -> bool {
    if index >= tree_size || leaf_hash.len() != 32 || root_hash.len() != 32 {
        return false;
    }
    let (mut fn_, mut sn) = (index, tree_size - 1);
    let mut r: Vec<u8> = leaf_hash.to_vec();
    for p in audit_path {
        if p.len() != 32 || sn == 0 {
            return false;
        }
        if fn_ % 2 == 1 || fn_ == sn {
            r = merkle_node_hash(p, &r).to_vec();
            while fn_ % 2 == 0 && fn_ != 0 {
                fn_ /= 2;
                sn /= 2;
            }
        } else {
            r = merkle_node_hash(&r, p).to_vec();
        }
        fn_ /= 2;
        sn /= 2;
    }
    sn == 0 && r == root_hash
}

fn tree_head(sth: &Value, resolver: &dyn KeyResolver) -> Result<(bool, String), JwksError> {
    if let Some(problem) = tree_head_shape_problem(sth) {
        return Ok((false, problem));
    }
    let Some(sig) = str_of(sth.get("sig")).and_then(b64url_decode) else {
        return Ok((false, "sig is not base64url without padding".into()));
    };
    let kid = str_of(sth.get("kid")).unwrap_or_default();
    let Some(key) = resolver.resolve_key(kid)? else {
        return Ok((false, format!("no published verification key has kid {kid}")));
    };
    let ok = signing_input(sth).map_or(false, |input| verify_raw(&key, &sig, &input));
    Ok(if ok {
        (true, format!("tree size {}, verified with key {kid}", js_string(sth.get("tree_size"))))
    } else {
        (false, format!("does not verify with key {kid}"))
    })
}

/// Checks that `proof` proves its receipt is in the tree whose signed head is `signed_tree_head` (None: the
/// head inside the proof); with `receipt`, also that the proof is about that receipt.
pub fn verify_inclusion_proof(
    proof: &Value,
    signed_tree_head: Option<&Value>,
    resolver: &dyn KeyResolver,
    receipt: Option<&Value>,
) -> Result<VerificationResult, JwksError> {
    let p = envelope_or_raw(proof);
    let head = match signed_tree_head.filter(|h| !h.is_null()) {
        Some(h) => envelope_or_raw(h),
        None => p.get("sth").cloned().unwrap_or(Value::Null),
    };
    let supplied = receipt.filter(|r| !r.is_null()).map(envelope_or_raw);
    let mut rec = Recorder::new(&TRANSPARENCY_CHECK_LABELS);
    if !rec.record("signed tree head", tree_head(&head, resolver)?) {
        return Ok(rec.finish());
    }
    if let Some(problem) = inclusion_proof_shape_problem(&p) {
        rec.record("proof schema", (false, problem));
        return Ok(rec.finish());
    }
    let schema = if num(p.get("tree_size")) == num(head.get("tree_size")) {
        (true, format!("leaf {} of {}", js_string(p.get("leaf_index")), js_string(p.get("tree_size"))))
    } else {
        (
            false,
            format!(
                "the proof is for tree size {}, the tree head for {}",
                js_string(p.get("tree_size")),
                js_string(head.get("tree_size"))
            ),
        )
    };
    if !rec.record("proof schema", schema) {
        return Ok(rec.finish());
    }
    let receipt_hash = str_of(p.get("receipt_hash")).unwrap_or_default();
    let receipt_id = str_of(p.get("receipt_id")).unwrap_or_default();
    let leaf = (|| {
        if hex(&merkle_leaf_hash(&unhex(receipt_hash).unwrap_or_default())) != str_of(p.get("leaf_hash")).unwrap_or_default() {
            return (false, "leaf_hash is not SHA-256(0x00 || receipt_hash)".to_string());
        }
        let Some(supplied) = &supplied else {
            return (true, "receipt not supplied, receipt_hash not compared".into());
        };
        if !supplied.is_object() {
            return (false, "the supplied receipt is not an envelope".into());
        }
        if str_of(supplied.get("jti")) != Some(receipt_id) {
            return (false, format!("the proof is for receipt {receipt_id}, not {}", js_string(supplied.get("jti"))));
        }
        match envelope_hash(supplied) {
            Err(_) => (false, "the supplied receipt cannot be canonicalised".into()),
            Ok(h) if h != receipt_hash => (false, "receipt_hash is not the hash of the supplied receipt".into()),
            Ok(_) => (true, format!("receipt_hash is the hash of the supplied receipt {receipt_id}")),
        }
    })();
    if !rec.record("leaf hash", leaf) {
        return Ok(rec.finish());
    }
    let path: Vec<Vec<u8>> = p["audit_path"].as_array().map(|a| a.iter().filter_map(|x| unhex(x.as_str()?)).collect()).unwrap_or_default();
    let root = str_of(head.get("root_hash")).unwrap_or_default();
    let included = verify_inclusion(
        &unhex(str_of(p.get("leaf_hash")).unwrap_or_default()).unwrap_or_default(),
        num(p.get("leaf_index")).unwrap_or(0.0) as u64,
        num(p.get("tree_size")).unwrap_or(0.0) as u64,
        &path,
        &unhex(root).unwrap_or_default(),
    );
    rec.record(
        "inclusion",
        if included {
            (true, format!("the audit path leads to root {root}"))
        } else {
            (false, "the audit path does not lead to the tree head's root_hash".into())
        },
    );
    Ok(rec.finish())
}

pub const CONSISTENCY_CHECK_LABELS: [&str; 4] = ["old tree head", "new tree head", "proof schema", "consistency"];
pub const EMPTY_ROOT_HEX: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// RFC 9162 section 2.1.4.2: is the tree of `first` leaves with `first_root` a prefix of the tree of `second`
/// leaves with `second_root`? Requires 1 <= first <= second; first == second needs an empty proof and equal roots.
pub fn verify_consistency(first: u64, second: u64, first_root: &[u8], second_root: &[u8], proof: &[Vec<u8>]) -> bool {
    if first < 1 || first > second {
        return false;
    }
    if first == second {
        return proof.is_empty() && first_root == second_root;
    }
    if first_root.len() != 32 || second_root.len() != 32 || proof.iter().any(|p| p.len() != 32) {
        return false;
    }
    let mut path: Vec<Vec<u8>> = Vec::new();
    if first & (first - 1) == 0 {
        path.push(first_root.to_vec());
    }
    path.extend(proof.iter().cloned());
    if path.is_empty() {
        return false;
    }
    let (mut fn_, mut sn) = (first - 1, second - 1);
    while fn_ % 2 == 1 {
        fn_ /= 2;
        sn /= 2;
    }
    let mut fr = path[0].clone();
    let mut sr = path[0].clone();
    for c in &path[1..] {
        if sn == 0 {
            return false;
        }
        if fn_ % 2 == 1 || fn_ == sn {
            fr = merkle_node_hash(c, &fr).to_vec();
            sr = merkle_node_hash(c, &sr).to_vec();
            while fn_ % 2 == 0 && fn_ != 0 {
                fn_ /= 2;
                sn /= 2;
            }
        } else {
            sr = merkle_node_hash(&sr, c).to_vec();
        }
        fn_ /= 2;
        sn /= 2;
    }
    sn == 0 && fr == first_root && sr == second_root
}

pub fn consistency_proof_shape_problem(value: &Value) -> Option<String> {
    if !value.is_object() {
        return Some("the proof is not a JSON object".into());
    }
    if !is_count(value.get("first")) {
        return Some("first must be a non-negative integer".into());
    }
    if !is_count(value.get("second")) {
        return Some("second must be a non-negative integer".into());
    }
    match value.get("consistency_path") {
        Some(Value::Array(items)) if items.iter().all(|p| is_sha256_hex(Some(p))) => None,
        _ => Some("consistency_path must be an array of 64 lowercase hex".into()),
    }
}

/// Checks that `proof` shows the log whose signed head you kept (`old_head`) is a prefix of the log whose head is
/// `new_head` (None: the head inside the proof): nothing you saw was removed or changed since.
pub fn verify_consistency_proof(proof: &Value, old_head: &Value, resolver: &dyn KeyResolver, new_head: Option<&Value>) -> Result<VerificationResult, JwksError> {
    let p = envelope_or_raw(proof);
    let older = envelope_or_raw(old_head);
    let mut rec = Recorder::new(&CONSISTENCY_CHECK_LABELS);
    if !rec.record("old tree head", tree_head(&older, resolver)?) {
        return Ok(rec.finish());
    }
    let newer = match new_head {
        Some(h) => envelope_or_raw(h),
        None => p.get("sth").filter(|_| p.is_object()).cloned().unwrap_or(Value::Null),
    };
    let mut outcome = tree_head(&newer, resolver)?;
    if outcome.0 && newer.get("iss") != older.get("iss") {
        outcome = (
            false,
            format!(
                "the new tree head is of the log {}, the old one of {}",
                newer.get("iss").cloned().unwrap_or(Value::Null),
                older.get("iss").cloned().unwrap_or(Value::Null)
            ),
        );
    }
    if !rec.record("new tree head", outcome) {
        return Ok(rec.finish());
    }
    let (old_size, new_size) = (num(older.get("tree_size")).unwrap_or(0.0), num(newer.get("tree_size")).unwrap_or(0.0));
    let old_root = str_of(older.get("root_hash")).unwrap_or_default().to_string();
    let new_root = str_of(newer.get("root_hash")).unwrap_or_default().to_string();
    let schema = (|| {
        if new_size < old_size {
            return (
                false,
                format!(
                    "the new tree head has {} leaves, fewer than the {} of the old one: the log rolled back",
                    js_string(newer.get("tree_size")),
                    js_string(older.get("tree_size"))
                ),
            );
        }
        if old_size == 0.0 {
            return if old_root == EMPTY_ROOT_HEX {
                (true, "the old tree is empty: every tree extends it".to_string())
            } else {
                (false, "the old tree head has 0 leaves but not the empty tree's root_hash".to_string())
            };
        }
        if let Some(problem) = consistency_proof_shape_problem(&p) {
            return (false, problem);
        }
        if num(p.get("first")) != Some(old_size) || num(p.get("second")) != Some(new_size) {
            return (
                false,
                format!(
                    "the proof is from tree size {} to {}, the tree heads are of {} and {}",
                    js_string(p.get("first")),
                    js_string(p.get("second")),
                    js_string(older.get("tree_size")),
                    js_string(newer.get("tree_size"))
                ),
            );
        }
        let hashes = p["consistency_path"].as_array().map_or(0, Vec::len);
        (true, format!("from tree size {} to {}, {hashes} hashes", js_string(p.get("first")), js_string(p.get("second"))))
    })();
    if !rec.record("proof schema", schema) {
        return Ok(rec.finish());
    }
    if old_size == 0.0 {
        rec.record("consistency", (true, format!("not needed: the log of {} leaves extends the empty log", js_string(newer.get("tree_size")))));
        return Ok(rec.finish());
    }
    let (first, second) = (num(p.get("first")).unwrap_or(0.0) as u64, num(p.get("second")).unwrap_or(0.0) as u64);
    let path: Vec<Vec<u8>> = p["consistency_path"].as_array().map(|a| a.iter().filter_map(|x| unhex(x.as_str()?)).collect()).unwrap_or_default();
    let consistent = verify_consistency(first, second, &unhex(&old_root).unwrap_or_default(), &unhex(&new_root).unwrap_or_default(), &path);
    let detail = if consistent {
        format!(
            "the log of {} leaves extends the log of {} leaves: root {old_root} to {new_root}",
            js_string(p.get("second")),
            js_string(p.get("first"))
        )
    } else if first == second && old_root != new_root {
        format!("two different root hashes for tree size {}: the log forked", js_string(p.get("first")))
    } else {
        format!("the consistency path does not lead from root {old_root} to {new_root}: the log forked or the proof is wrong")
    };
    rec.record("consistency", (consistent, detail));
    Ok(rec.finish())
}
