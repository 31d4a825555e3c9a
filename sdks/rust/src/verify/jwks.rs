//! The receipt verification keys: a JWKS the caller holds (or any resolver of kids).

use crate::wire::ecdsa::public_key_from_jwk;
use p256::ecdsa::VerifyingKey;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

/// The receipt keys are not available, so nothing could be verified (not a verdict on the receipt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwksError {
    /// invalid_gateway_url, jwks_unreachable or jwks_invalid
    pub code: String,
    pub message: String,
}

impl std::fmt::Display for JwksError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}
impl std::error::Error for JwksError {}

/// kid -> verification key. Ok(None) is an unknown kid; Err means nothing could be verified.
pub trait KeyResolver {
    fn resolve_key(&self, kid: &str) -> Result<Option<VerifyingKey>, JwksError>;
}

pub fn jwks_problem(value: &Value) -> Option<&'static str> {
    let keys = match value.get("keys") {
        Some(Value::Array(keys)) if value.is_object() => keys,
        _ => return Some("not a JWKS: expected an object with a keys array"),
    };
    if !keys.iter().all(|k| k.is_object() && k.get("kid").map_or(false, Value::is_string)) {
        return Some("not a JWKS: every key needs a kid");
    }
    None
}

/// A JWKS held by the caller.
pub struct Jwks {
    keys: Vec<Value>,
    imported: Mutex<HashMap<String, Option<VerifyingKey>>>,
}

impl Jwks {
    pub fn new(jwks: &Value) -> Result<Self, JwksError> {
        if let Some(problem) = jwks_problem(jwks) {
            return Err(JwksError { code: "jwks_invalid".into(), message: format!("jwks option: {problem}") });
        }
        Ok(Jwks { keys: jwks["keys"].as_array().cloned().unwrap_or_default(), imported: Mutex::new(HashMap::new()) })
    }
}

impl KeyResolver for Jwks {
    fn resolve_key(&self, kid: &str) -> Result<Option<VerifyingKey>, JwksError> {
        let mut imported = self.imported.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = imported.get(kid) {
            return Ok(*k);
        }
        let Some(jwk) = self.keys.iter().find(|k| k.get("kid").and_then(Value::as_str) == Some(kid)) else {
            return Ok(None);
        };
        let key = public_key_from_jwk(jwk);
        imported.insert(kid.to_string(), key);
        Ok(key)
    }
}
