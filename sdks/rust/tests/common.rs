#![allow(dead_code)]
use serde_json::Value;
use std::path::PathBuf;

/// Reads a vector file from sdks/vectors (copy nothing: the files are the contract).
pub fn load(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("vector JSON")
}

pub fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("{k} is not a string"))
}

/// Every file of sdks/vectors this suite reads; a new file fails `every_vector_file_is_read` until a test reads it.
pub const VECTOR_FILES: [&str; 14] = [
    "aliases", "attestation", "egress-policy", "egress-policy-cases", "jcs", "merkle-proofs", "name-model", "receipts", "sha256",
    "tokeniser-large", "tokeniser-names", "tokeniser-spans", "transparency", "webhooks",
];
