//! The v3 attestation: the envelope this device signs right before egress, proving the exact body sent was
//! tokenised by an official engine. Sent as X-Service-Attestation (standard padded base64 of the JSON).

use crate::verify::js::*;
use crate::wire::b64::{b64url_decode, b64url_encode};
use crate::wire::ecdsa::{is_public_jwk, public_key_from_jwk, verify_raw, SigningKey};
use crate::wire::hashing::{is_hex_of_len, is_sha256_hex, json_body_sha256_hex, sha256_hex};
use crate::wire::jcs::object;
use crate::wire::{encode_json_header, signing_input};
use serde_json::{Map, Value};

pub const ATTESTATION_ROUTES: [&str; 5] = ["chat.completions", "messages", "embeddings", "responses", "messages.count_tokens"];
pub const DEFAULT_TRUST_TIER: &str = "self-attested";

/// The engine that tokenised the body: `X-Service-Engine: <id>/<version>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineIdentity {
    pub id: String,
    pub version: String,
    pub sha256: String,
}

impl EngineIdentity {
    pub fn header_value(&self) -> String {
        format!("{}/{}", self.id, self.version)
    }
}

/// Inputs of one attestation. `jti`/`iat` default to a fresh random id and the clock.
#[derive(Debug, Clone)]
pub struct AttestationInput<'a> {
    pub route: &'a str,
    pub body_bytes: &'a [u8],
    /// True when `body_bytes` are already the JCS text of the body (tokenise_request's bytes): hashed as they are.
    pub body_is_canonical: bool,
    pub detectors_fired: Map<String, Value>,
    pub engine: EngineIdentity,
    pub trust_tier: Option<&'a str>,
    pub jti: Option<String>,
    pub iat: Option<i64>,
    /// What an opt-in let through untokenised: `[{ path, kind }]` (never values); omitted when empty.
    pub passthrough: Option<Value>,
    /// RFC 6979 nonce with no added randomness: reproducible bytes (fixtures, vectors).
    pub deterministic: bool,
}

pub fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    getrandom::getrandom(&mut b).expect("operating system randomness");
    crate::wire::hashing::hex(&b)
}

pub fn now_seconds() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Signs the attestation for one egress body. Errs when `body_bytes` is not a JSON document.
pub fn build_attestation(input: &AttestationInput<'_>, key: &SigningKey) -> Result<Value, String> {
    let egress = if input.body_is_canonical {
        std::str::from_utf8(input.body_bytes).map_err(|_| "the body is not UTF-8")?;
        sha256_hex(input.body_bytes)
    } else {
        json_body_sha256_hex(input.body_bytes)?
    };
    let mut claims = vec![
        ("route", Value::from(input.route)),
        ("egress_sha256", egress.into()),
        ("detectors_fired", Value::Object(input.detectors_fired.clone())),
        (
            "engine",
            object(vec![
                ("id", input.engine.id.clone().into()),
                ("version", input.engine.version.clone().into()),
                ("sha256", input.engine.sha256.clone().into()),
            ]),
        ),
        ("trust_tier", input.trust_tier.unwrap_or(DEFAULT_TRUST_TIER).into()),
        ("attester_public_key", key.public_jwk()),
    ];
    if let Some(p) = input.passthrough.as_ref().filter(|p| p.as_array().map_or(true, |a| !a.is_empty())) {
        claims.push(("passthrough", p.clone()));
    }
    let mut envelope = object(vec![
        ("v", "v3".into()),
        ("alg", "ecdsa-p256-sha256".into()),
        ("jti", input.jti.clone().unwrap_or_else(|| random_hex(16)).into()),
        ("iat", input.iat.unwrap_or_else(now_seconds).into()),
        ("claims", object(vec![("v3-attestation", object(claims))])),
    ]);
    let data = signing_input(&envelope).map_err(|e| e.0)?;
    let sig = if input.deterministic { key.sign_deterministic(&data) } else { key.sign(&data) };
    envelope.as_object_mut().expect("object").insert("sig".into(), b64url_encode(&sig).into());
    Ok(envelope)
}

pub fn encode_attestation_header(envelope: &Value) -> Result<String, String> {
    encode_json_header(envelope).map_err(|e| e.0)
}

/// Why `value` is not a v3 envelope, or None. Extra members are allowed (they are signed).
pub fn v3_envelope_shape_problem(value: &Value) -> Option<String> {
    if !value.is_object() {
        return Some("envelope is not a JSON object".into());
    }
    if str_of(value.get("v")) != Some("v3") {
        return Some("v must be \"v3\"".into());
    }
    if !is_str(value.get("alg")) {
        return Some("alg must be a string".into());
    }
    if !matches!(str_of(value.get("jti")), Some(j) if is_hex_of_len(j, 32)) {
        return Some("jti must be 32 lowercase hex".into());
    }
    if !is_safe_integer(value.get("iat")) {
        return Some("iat must be an integer (Unix seconds)".into());
    }
    if !non_empty(value.get("sig")) {
        return Some("sig must be a non-empty string".into());
    }
    if !value.get("claims").map_or(false, Value::is_object) {
        return Some("claims must be an object".into());
    }
    let claims = match value["claims"].get("v3-attestation") {
        Some(c @ Value::Object(_)) => c,
        _ => return Some("claims.v3-attestation must be an object".into()),
    };
    if !str_of(claims.get("route")).map_or(false, |r| ATTESTATION_ROUTES.contains(&r)) {
        return Some(format!("route must be one of {}", ATTESTATION_ROUTES.join(", ")));
    }
    if !is_sha256_hex(claims.get("egress_sha256")) {
        return Some("egress_sha256 must be 64 lowercase hex".into());
    }
    let Some(Value::Object(fired)) = claims.get("detectors_fired") else {
        return Some("detectors_fired must be an object".into());
    };
    if !fired.values().all(|c| is_safe_integer(Some(c)) && num(Some(c)).unwrap_or(-1.0) >= 0.0) {
        return Some("detectors_fired counts must be non-negative integers".into());
    }
    let engine = claims.get("engine");
    if !engine.map_or(false, |e| e.is_object() && non_empty(e.get("id")) && non_empty(e.get("version"))) {
        return Some("engine must have id and version strings".into());
    }
    if !is_sha256_hex(engine.and_then(|e| e.get("sha256"))) {
        return Some("engine.sha256 must be 64 lowercase hex".into());
    }
    if !non_empty(claims.get("trust_tier")) {
        return Some("trust_tier must be a non-empty string".into());
    }
    if !is_public_jwk(claims.get("attester_public_key")) {
        return Some("attester_public_key must be an EC P-256 public JWK".into());
    }
    if let Some(p) = claims.get("passthrough") {
        match p {
            Value::Array(entries) if entries.len() <= 1000 => {
                if !entries.iter().all(|e| e.is_object() && is_str(e.get("path")) && non_empty(e.get("kind"))) {
                    return Some("passthrough entries must be { path, kind } strings".into());
                }
            }
            _ => return Some("passthrough must be an array of at most 1000 entries".into()),
        }
    }
    None
}

/// The envelope's `sig` against its embedded attester_public_key. Never panics.
pub fn verify_v3_signature(envelope: &Value) -> bool {
    let Some(jwk) = envelope.get("claims").and_then(|c| c.get("v3-attestation")).and_then(|c| c.get("attester_public_key")) else {
        return false;
    };
    let Some(key) = public_key_from_jwk(jwk) else { return false };
    let Some(sig) = str_of(envelope.get("sig")).and_then(b64url_decode) else { return false };
    signing_input(envelope).map_or(false, |input| verify_raw(&key, &sig, &input))
}
