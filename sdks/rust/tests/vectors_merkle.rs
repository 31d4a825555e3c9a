//! sdks/vectors/merkle-proofs.json: RFC 9162 inclusion and consistency proofs on bare hashes (the
//! transparency-dev/merkle test data, every proof of the reference tree, and mutations that must be rejected).
mod common;
use common::{load, s};
use privacy_relay::verify::transparency::{verify_consistency, verify_inclusion};
use privacy_relay::wire::hashing::{hex, merkle_leaf_hash, merkle_node_hash, unhex};
use serde_json::Value;

fn root(leaves: &[[u8; 32]]) -> [u8; 32] {
    if leaves.len() == 1 {
        return leaves[0];
    }
    let mut k = 1;
    while k * 2 < leaves.len() {
        k *= 2;
    }
    merkle_node_hash(&root(&leaves[..k]), &root(&leaves[k..]))
}

fn hashes(v: &Value) -> Vec<Vec<u8>> {
    v.as_array().unwrap().iter().map(|h| unhex(h.as_str().unwrap()).unwrap()).collect()
}

#[test]
fn reference_tree_leaves_and_roots() {
    let m = load("merkle-proofs");
    let tree = &m["reference_tree"];
    let leaves: Vec<[u8; 32]> = tree["leaves"].as_array().unwrap().iter().map(|l| merkle_leaf_hash(&unhex(l.as_str().unwrap()).unwrap())).collect();
    let hexes: Vec<String> = leaves.iter().map(|h| hex(h)).collect();
    assert_eq!(Value::from(hexes), tree["leaf_hashes"]);
    for entry in tree["roots"].as_array().unwrap().iter().skip(1) {
        let n = entry["tree_size"].as_u64().unwrap() as usize;
        assert_eq!(hex(&root(&leaves[..n])), s(entry, "root_hash"));
    }
}

#[test]
fn inclusion_cases() {
    let m = load("merkle-proofs");
    let mut wrong = Vec::new();
    for c in m["inclusion"].as_array().unwrap() {
        let got = verify_inclusion(
            &unhex(s(c, "leaf_hash")).unwrap_or_default(),
            c["leaf_index"].as_u64().unwrap_or(u64::MAX),
            c["tree_size"].as_u64().unwrap_or(0),
            &hashes(&c["audit_path"]),
            &unhex(s(c, "root_hash")).unwrap_or_default(),
        );
        if got != c["valid"].as_bool().unwrap() {
            wrong.push(s(c, "name").to_string());
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn consistency_cases() {
    let m = load("merkle-proofs");
    let mut wrong = Vec::new();
    for c in m["consistency"].as_array().unwrap() {
        let got = verify_consistency(
            c["first"].as_u64().unwrap_or(0),
            c["second"].as_u64().unwrap_or(0),
            &unhex(s(c, "first_root")).unwrap_or_default(),
            &unhex(s(c, "second_root")).unwrap_or_default(),
            &hashes(&c["consistency_path"]),
        );
        if got != c["valid"].as_bool().unwrap() {
            wrong.push(s(c, "name").to_string());
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
