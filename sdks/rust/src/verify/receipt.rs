//! Offline verification of every envelope the gateway hands out (v1, v2, failed v2, the v3 countersignature)
//! and of client v3 attestations. Five checks, always in this order with these labels; the first failure decides
//! `reason` ("<label>: <detail>"); checks after it are "skipped".

use super::js::*;
use super::jwks::{JwksError, KeyResolver};
use crate::attestation::{v3_envelope_shape_problem, verify_v3_signature};
use crate::wire::b64::b64url_decode;
use crate::wire::ecdsa::verify_raw;
use crate::wire::hashing::{envelope_hash, is_hex_of_len, is_sha256_hex, GENESIS_PREV_HASH};
use crate::wire::{decode_json_header, signing_input};
use serde_json::{json, Value};

pub const CHECK_LABELS: [&str; 5] = [
    "schema valid (OpenReceipt v1)",
    "algorithm allow-listed",
    "freshness (iat, nbf, exp)",
    "signature",
    "chain linkage (seq and prev_hash)",
];
pub const RECEIPT_MAX_SKEW_SECONDS: f64 = 300.0;
pub const SKIPPED: &str = "not evaluated: an earlier check failed";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationCheck {
    pub label: String,
    /// "ok" | "fail" | "skipped"
    pub status: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationResult {
    pub valid: bool,
    pub reason: Option<String>,
    pub checks: Vec<VerificationCheck>,
}

impl VerificationResult {
    pub fn to_json(&self) -> Value {
        json!({
            "valid": self.valid,
            "reason": self.reason,
            "checks": self.checks.iter().map(|c| json!({"label": c.label, "status": c.status, "detail": c.detail})).collect::<Vec<_>>()
        })
    }
}

pub(crate) struct Recorder {
    labels: &'static [&'static str],
    checks: Vec<VerificationCheck>,
}

impl Recorder {
    pub(crate) fn new(labels: &'static [&'static str]) -> Self {
        Recorder { labels, checks: Vec::new() }
    }
    pub(crate) fn record(&mut self, label: &str, outcome: (bool, String)) -> bool {
        self.checks.push(VerificationCheck {
            label: label.into(),
            status: if outcome.0 { "ok" } else { "fail" }.into(),
            detail: outcome.1,
        });
        outcome.0
    }
    pub(crate) fn finish(mut self) -> VerificationResult {
        let failure = self.checks.iter().find(|c| c.status == "fail").map(|c| format!("{}: {}", c.label, c.detail));
        for label in &self.labels[self.checks.len().min(self.labels.len())..] {
            self.checks.push(VerificationCheck { label: (*label).into(), status: "skipped".into(), detail: SKIPPED.into() });
        }
        VerificationResult { valid: failure.is_none(), reason: failure, checks: self.checks }
    }
}

fn hex32(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(s)) if is_hex_of_len(s, 32))
}

fn rfc3339_millis(v: Option<&Value>) -> bool {
    let Some(s) = str_of(v) else { return false };
    let b = s.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            23 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

fn hash_or_null(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null)) || is_sha256_hex(v)
}

fn str_or_null(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null) | Some(Value::String(_)))
}

fn common_problem(e: &Value) -> Option<&'static str> {
    if !is_str(e.get("alg")) {
        return Some("alg must be a string");
    }
    if !non_empty(e.get("kid")) {
        return Some("kid must be a non-empty string");
    }
    if !non_empty(e.get("iss")) {
        return Some("iss must be a non-empty string");
    }
    if !hex32(e.get("jti")) {
        return Some("jti must be 32 lowercase hex");
    }
    if !is_count(e.get("iat")) {
        return Some("iat must be a non-negative integer (Unix seconds)");
    }
    if e.get("nbf").is_some() && !is_safe_integer(e.get("nbf")) {
        return Some("nbf must be an integer when present");
    }
    if e.get("exp").is_some() && !is_safe_integer(e.get("exp")) {
        return Some("exp must be an integer when present");
    }
    let chain = match e.get("chain") {
        Some(c @ Value::Object(_)) => c,
        _ => return Some("chain must be an object"),
    };
    if !non_empty(chain.get("chain_id")) {
        return Some("chain.chain_id must be a non-empty string");
    }
    if !is_number(chain.get("seq")) {
        return Some("chain.seq must be a number");
    }
    if !is_str(chain.get("prev_hash")) {
        return Some("chain.prev_hash must be a string");
    }
    if !non_empty(e.get("sig")) {
        return Some("sig must be a non-empty string");
    }
    None
}

fn v2_problem(e: &Value, failed: bool) -> Option<String> {
    if let Some(p) = common_problem(e) {
        return Some(p.into());
    }
    if !non_empty(e.get("signature")) {
        return Some("signature must be a non-empty string".into());
    }
    if !rfc3339_millis(e.get("timestamp")) {
        return Some("timestamp must be RFC 3339 UTC with milliseconds".into());
    }
    match e.get("extensions") {
        Some(ext @ Value::Object(_)) if is_str(ext.get("request_id")) => {}
        _ => return Some("extensions.request_id must be a string".into()),
    }
    if failed {
        let status = num(e.get("status"));
        if !is_safe_integer(e.get("status")) || !(400.0..=599.0).contains(&status.unwrap_or(0.0)) {
            return Some("status must be an HTTP error status (400-599)".into());
        }
        if !non_empty(e.get("error_code")) {
            return Some("error_code must be a non-empty string".into());
        }
        if e.get("input_tokens").is_some() || e.get("output_tokens").is_some() {
            return Some("a failed receipt carries no token counts".into());
        }
        for member in ["request_id", "provider", "model"] {
            if !str_or_null(e.get(member)) {
                return Some(format!("{member} must be a string or null"));
            }
        }
        if !hash_or_null(e.get("hash_upstream_request")) {
            return Some("hash_upstream_request must be 64 lowercase hex or null".into());
        }
        if !hash_or_null(e.get("hash_upstream_response")) {
            return Some("hash_upstream_response must be 64 lowercase hex or null".into());
        }
        return None;
    }
    if !is_str(e.get("request_id")) {
        return Some("request_id must be a string".into());
    }
    if !non_empty(e.get("provider")) {
        return Some("provider must be a non-empty string".into());
    }
    if !non_empty(e.get("model")) {
        return Some("model must be a non-empty string".into());
    }
    if !is_count(e.get("input_tokens")) {
        return Some("input_tokens must be a non-negative integer".into());
    }
    if !is_count(e.get("output_tokens")) {
        return Some("output_tokens must be a non-negative integer".into());
    }
    if !is_sha256_hex(e.get("hash_upstream_request")) {
        return Some("hash_upstream_request must be 64 lowercase hex".into());
    }
    if !is_sha256_hex(e.get("hash_upstream_response")) {
        return Some("hash_upstream_response must be 64 lowercase hex".into());
    }
    if let Some(r) = e.get("routing_decision") {
        if !r.is_object() {
            return Some("routing_decision must be an object when present".into());
        }
        for member in ["from", "to", "chosen_model", "classifier", "strategy"] {
            if !is_str(r.get(member)) {
                return Some(format!("routing_decision.{member} must be a string"));
            }
        }
        if !is_number(r.get("savings_pct")) {
            return Some("routing_decision.savings_pct must be a number".into());
        }
        if r.get("provider_id").is_some() {
            return Some("routing_decision has no provider_id member".into());
        }
    }
    None
}

fn v1_problem(e: &Value) -> Option<String> {
    if let Some(p) = common_problem(e) {
        return Some(p.into());
    }
    if !non_empty(e.get("sub")) {
        return Some("sub must be a non-empty string".into());
    }
    let c = match e.get("claims") {
        Some(c @ Value::Object(_)) => c,
        _ => return Some("claims must be an object".into()),
    };
    for member in ["capability", "provider", "model", "tokenisation_mode"] {
        if !non_empty(c.get(member)) {
            return Some(format!("claims.{member} must be a non-empty string"));
        }
    }
    if !is_count(c.get("tokens_in")) {
        return Some("claims.tokens_in must be a non-negative integer".into());
    }
    if !is_count(c.get("tokens_out")) {
        return Some("claims.tokens_out must be a non-negative integer".into());
    }
    if !is_sha256_hex(c.get("hash_upstream_request")) {
        return Some("claims.hash_upstream_request must be 64 lowercase hex".into());
    }
    if !is_sha256_hex(c.get("hash_upstream_response")) {
        return Some("claims.hash_upstream_response must be 64 lowercase hex".into());
    }
    // Python: `r is not None` where a missing member reads as MISSING (not None): both absent and null pass only when null.
    match c.get("routing_decision") {
        Some(Value::Null) => {}
        Some(r @ Value::Object(_)) => {
            for member in ["from", "to", "chosen_model", "strategy", "classifier"] {
                if !is_str(r.get(member)) {
                    return Some(format!("claims.routing_decision.{member} must be a string"));
                }
            }
        }
        _ => return Some("claims.routing_decision must be an object or null".into()),
    }
    if !matches!(c.get("engine_version"), Some(Value::Null) | Some(Value::String(_))) {
        return Some("claims.engine_version must be a string or null".into());
    }
    None
}

const CLIENT_WIRE_FORMATS: [&str; 3] = ["openai", "anthropic", "openai-responses"];

fn wire_format_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_lowercase()
        && b[1..].iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

pub fn countersignature_shape_problem(e: &Value) -> Option<String> {
    if !is_str(e.get("alg")) {
        return Some("alg must be a string".into());
    }
    for member in ["kid", "iss", "provider", "model", "sig"] {
        if !non_empty(e.get(member)) {
            return Some(format!("{member} must be a non-empty string"));
        }
    }
    for member in ["jti", "attestation_jti"] {
        if !hex32(e.get(member)) {
            return Some(format!("{member} must be 32 lowercase hex"));
        }
    }
    if !is_safe_integer(e.get("iat")) || num(e.get("iat")).unwrap_or(-1.0) < 0.0 {
        return Some("iat must be a non-negative integer (Unix seconds)".into());
    }
    if !rfc3339_millis(e.get("timestamp")) {
        return Some("timestamp must be RFC 3339 UTC with milliseconds".into());
    }
    for member in ["attestation_sha256", "egress_sha256", "hash_upstream_request", "hash_upstream_response"] {
        if !is_sha256_hex(e.get(member)) {
            return Some(format!("{member} must be 64 lowercase hex"));
        }
    }
    if let Some(t) = e.get("translation") {
        let from = str_of(t.get("from"));
        let to = str_of(t.get("to"));
        let ok = t.is_object()
            && from.map_or(false, |f| CLIENT_WIRE_FORMATS.contains(&f))
            && to.map_or(false, wire_format_name)
            && from != to;
        if !ok {
            return Some("translation must be { from, to } naming two different wire formats".into());
        }
    } else if e.get("egress_sha256") != e.get("hash_upstream_request") {
        return Some("hash_upstream_request must equal the attested egress_sha256".into());
    }
    if !matches!(str_of(e.get("witness")), Some("relayed") | Some("asserted")) {
        return Some("witness must be \"relayed\" or \"asserted\"".into());
    }
    match e.get("receipt_jti") {
        None | Some(Value::Null) => {}
        rj if hex32(rj) => {}
        _ => return Some("receipt_jti must be 32 lowercase hex or null".into()),
    }
    None
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    V1,
    V2,
    V2Failed,
    V3,
    V3Countersignature,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::V1 => "v1",
            Kind::V2 => "v2",
            Kind::V2Failed => "v2-failed",
            Kind::V3 => "v3",
            Kind::V3Countersignature => "v3-countersignature",
        }
    }
    fn expected_alg(self) -> &'static str {
        match self {
            Kind::V1 | Kind::V3 => "ecdsa-p256-sha256",
            _ => "ES256",
        }
    }
}

fn classify(value: &Value) -> Result<Kind, String> {
    if !value.is_object() {
        return Err("envelope is not a JSON object".into());
    }
    let v = value.get("v");
    let (kind, problem) = if num(v) == Some(2.0) {
        let outcome = value.get("outcome");
        if outcome.is_some() && str_of(outcome) != Some("failed") {
            return Err("outcome must be \"failed\" when present".into());
        }
        let failed = outcome.is_some();
        let kind = if failed { Kind::V2Failed } else { Kind::V2 };
        (kind, v2_problem(value, failed))
    } else {
        match str_of(v) {
            Some("v1") => (Kind::V1, v1_problem(value)),
            Some("v3") => (Kind::V3, v3_envelope_shape_problem(value)),
            Some("v3-countersignature") => (Kind::V3Countersignature, countersignature_shape_problem(value)),
            _ => return Err("unknown envelope version (v must be \"v1\", 2, \"v3\" or \"v3-countersignature\")".into()),
        }
    };
    match problem {
        None => Ok(kind),
        Some(p) => Err(format!("{} envelope: {}", kind.name(), p)),
    }
}

fn freshness(e: &Value, now: f64) -> (bool, String) {
    let iat = num(e.get("iat")).unwrap_or(0.0);
    if iat > now + RECEIPT_MAX_SKEW_SECONDS {
        return (false, format!("iat is {} s in the future (more than 300 s)", fnum(iat - now)));
    }
    let nbf = e.get("nbf");
    let exp = e.get("exp");
    if let Some(nbf) = num(nbf) {
        if now + RECEIPT_MAX_SKEW_SECONDS < nbf {
            return (false, "not yet valid (nbf)".into());
        }
    }
    if let Some(exp) = num(exp) {
        if now >= exp {
            return (false, "expired (exp)".into());
        }
    }
    let extra = if nbf.is_some() || exp.is_some() { "; nbf/exp respected" } else { "" };
    (true, format!("iat not in the future{extra}"))
}

fn signature(kind: Kind, e: &Value, resolver: &dyn KeyResolver) -> Result<(bool, String), JwksError> {
    if kind == Kind::V3 {
        return Ok(if verify_v3_signature(e) {
            (true, "verified with the embedded attester_public_key".into())
        } else {
            (false, "does not verify with the embedded attester_public_key".into())
        });
    }
    if matches!(kind, Kind::V2 | Kind::V2Failed) && e.get("signature") != e.get("sig") {
        return Ok((false, "signature and sig differ".into()));
    }
    let Some(sig) = str_of(e.get("sig")).and_then(b64url_decode) else {
        return Ok((false, "sig is not base64url without padding".into()));
    };
    if sig.len() != 64 {
        return Ok((false, "sig is not a 64-byte raw r||s signature".into()));
    }
    let kid = str_of(e.get("kid")).unwrap_or_default();
    let Some(key) = resolver.resolve_key(kid)? else {
        return Ok((false, format!("no published verification key has kid {kid}")));
    };
    let Ok(input) = signing_input(e) else {
        return Ok((false, format!("does not verify with key {kid}")));
    };
    Ok(if verify_raw(&key, &sig, &input) {
        (true, format!("verified with key {kid}"))
    } else {
        (false, format!("does not verify with key {kid}"))
    })
}

fn attestation_binding(e: &Value, attestation: Option<&Value>) -> Result<(bool, String), ()> {
    let ajti = str_of(e.get("attestation_jti")).unwrap_or_default();
    let Some(att) = attestation else {
        return Ok((true, format!("countersigns attestation {ajti}; attestation not supplied, binding not compared")));
    };
    if !att.is_object() {
        return Ok((false, "the supplied attestation is not an envelope".into()));
    }
    if att.get("jti") != e.get("attestation_jti") {
        return Ok((false, format!("countersigns attestation {ajti}, not {}", js_string(att.get("jti")))));
    }
    if envelope_hash(att).map_err(|_| ())? != str_of(e.get("attestation_sha256")).unwrap_or_default() {
        return Ok((false, "attestation_sha256 is not the hash of the supplied attestation".into()));
    }
    Ok((true, format!("countersigns the supplied attestation {ajti}")))
}

fn chain_linkage(kind: Kind, e: &Value, previous: Option<&Value>, attestation: Option<&Value>) -> Result<(bool, String), ()> {
    let prefix = match kind {
        Kind::V3 => return Ok((true, "not applicable: v3 attestations are client-signed and not chained".into())),
        Kind::V3Countersignature => return attestation_binding(e, attestation),
        Kind::V1 => "tenant-",
        Kind::V2 => "receipt-v2-org-",
        Kind::V2Failed => "failed-v2-org-",
    };
    let chain = &e["chain"];
    let chain_id = str_of(chain.get("chain_id")).unwrap_or_default();
    if !chain_id.starts_with(prefix) || chain_id.len() == prefix.len() {
        return Ok((false, format!("chain_id of a {} receipt must be {prefix}<id>", kind.name())));
    }
    let seq_v = chain.get("seq");
    if !is_safe_integer(seq_v) || num(seq_v).unwrap_or(0.0) < 1.0 {
        return Ok((false, "seq must be a positive integer".into()));
    }
    let seq = num(seq_v).unwrap_or(0.0);
    if !is_sha256_hex(chain.get("prev_hash")) {
        return Ok((false, "prev_hash must be 64 lowercase hex".into()));
    }
    let prev_hash = str_of(chain.get("prev_hash")).unwrap_or_default();
    if seq == 1.0 && prev_hash != GENESIS_PREV_HASH {
        return Ok((false, "seq 1 must carry the genesis prev_hash".into()));
    }
    if seq > 1.0 && prev_hash == GENESIS_PREV_HASH {
        return Ok((false, "only seq 1 may carry the genesis prev_hash".into()));
    }
    let seq_text = fnum(seq);
    let Some(previous) = previous else {
        return Ok((true, format!("seq {seq_text}; previous receipt not supplied, link not compared")));
    };
    let before = match previous.get("chain") {
        Some(c @ Value::Object(_)) if previous.is_object() => c,
        _ => return Ok((false, "the supplied previous receipt has no chain".into())),
    };
    if before.get("chain_id") != chain.get("chain_id") {
        return Ok((false, "previous receipt belongs to another chain".into()));
    }
    let before_seq = before.get("seq");
    if num(before_seq) != Some(seq - 1.0) {
        return Ok((false, format!("seq {seq_text} does not follow previous seq {}", js_string(before_seq))));
    }
    if envelope_hash(previous).map_err(|_| ())? != prev_hash {
        return Ok((false, "prev_hash is not the hash of the previous receipt".into()));
    }
    Ok((true, format!("seq {seq_text} follows seq {} and prev_hash matches", fnum(seq - 1.0))))
}

/// Verifies one decoded envelope. Errs only when the resolver does (nothing verified).
pub fn verify_envelope(
    envelope: &Value,
    resolver: &dyn KeyResolver,
    now_seconds: f64,
    previous: Option<&Value>,
    attestation: Option<&Value>,
) -> Result<VerificationResult, JwksError> {
    let mut rec = Recorder::new(&CHECK_LABELS);
    let kind = match classify(envelope) {
        Err(problem) => {
            rec.record(CHECK_LABELS[0], (false, problem));
            return Ok(rec.finish());
        }
        Ok(kind) => kind,
    };
    rec.record(CHECK_LABELS[0], (true, format!("{} envelope", kind.name())));
    let alg = str_of(envelope.get("alg")).unwrap_or_default();
    let alg_ok = if alg == kind.expected_alg() {
        (true, alg.to_string())
    } else {
        (false, format!("{alg} is not allowed for {}; expected {}", kind.name(), kind.expected_alg()))
    };
    if !rec.record(CHECK_LABELS[1], alg_ok) {
        return Ok(rec.finish());
    }
    if !rec.record(CHECK_LABELS[2], freshness(envelope, now_seconds)) {
        return Ok(rec.finish());
    }
    if !rec.record(CHECK_LABELS[3], signature(kind, envelope, resolver)?) {
        return Ok(rec.finish());
    }
    let linkage = chain_linkage(kind, envelope, previous, attestation)
        .unwrap_or((false, "the previous receipt or the attestation cannot be canonicalised".into()));
    rec.record(CHECK_LABELS[4], linkage);
    Ok(rec.finish())
}

pub const UNDECODABLE: &str = "the value is neither JSON text nor standard padded base64 of a JSON envelope";

/// What the verifiers accept for an envelope: the object, its JSON text, or the standard base64 header value.
pub fn decode_envelope_input(value: &Value) -> Result<Value, String> {
    match value {
        Value::String(s) => decode_envelope_text(s),
        other => Ok(other.clone()),
    }
}

pub fn decode_envelope_text(s: &str) -> Result<Value, String> {
    let text = s.trim();
    if text.starts_with('{') {
        serde_json::from_str(text).map_err(|_| "the value is not valid JSON text".to_string())
    } else {
        decode_json_header(text).ok_or_else(|| UNDECODABLE.to_string())
    }
}

/// The decoded envelope, or the value as given when it cannot be decoded (the verifier reports it).
pub fn envelope_or_raw(value: &Value) -> Value {
    decode_envelope_input(value).unwrap_or_else(|_| value.clone())
}

pub fn undecodable(problem: String) -> VerificationResult {
    let mut rec = Recorder::new(&CHECK_LABELS);
    rec.record(CHECK_LABELS[0], (false, problem));
    rec.finish()
}

/// Verifies a v1, v2, failed or v3-countersignature receipt (or a v3 attestation) offline.
/// `input`: the header value or JSON text (as a JSON string) or the decoded object. An invalid receipt is a
/// result; only a resolver that cannot give keys is an error.
pub fn verify_receipt(
    input: &Value,
    resolver: &dyn KeyResolver,
    now_seconds: f64,
    previous: Option<&Value>,
    attestation: Option<&Value>,
) -> Result<VerificationResult, JwksError> {
    let decoded = match decode_envelope_input(input) {
        Ok(d) => d,
        Err(problem) => return Ok(undecodable(problem)),
    };
    let previous = previous.filter(|p| !p.is_null()).map(envelope_or_raw);
    let attestation = attestation.filter(|a| !a.is_null()).map(envelope_or_raw);
    verify_envelope(&decoded, resolver, now_seconds, previous.as_ref(), attestation.as_ref())
}
