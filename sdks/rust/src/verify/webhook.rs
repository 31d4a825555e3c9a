//! Webhook receivers: authenticate a delivery (v1 `X-Service-Signature` preferred, v0
//! `X-Service-Webhook-Signature` when v1 is absent) and drop duplicates by event_id.

use crate::wire::hashing::hex;
use crate::wire::jcs::canonical_string;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use std::collections::{HashMap, VecDeque};

pub const DEFAULT_TOLERANCE_SECONDS: f64 = 300.0;

/// A delivery that must not be trusted. `code`: missing_headers, malformed_header, bad_signature,
/// stale_timestamp, malformed_body or missing_secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookVerificationError {
    pub code: &'static str,
    pub message: String,
}

impl std::fmt::Display for WebhookVerificationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}
impl std::error::Error for WebhookVerificationError {}

fn message(code: &str) -> &'static str {
    match code {
        "missing_headers" => "the delivery carries neither X-Service-Signature nor X-Service-Webhook-Signature",
        "malformed_header" => "the signature header is not in its scheme's form (t=<unix>,v1=<hex> or sha256=<hex>)",
        "bad_signature" => "the signature does not match the body under this secret (tampered body, or a wrong or rotated secret)",
        "stale_timestamp" => "the signature is genuine but its timestamp is outside the tolerance: a stale or replayed delivery",
        "malformed_body" => "the body is not UTF-8 JSON with an integer timestamp",
        _ => "no webhook secret was given",
    }
}

fn fail(code: &'static str, scheme: Option<&str>) -> WebhookVerificationError {
    let m = message(code);
    WebhookVerificationError { code, message: scheme.map_or(m.to_string(), |s| format!("{s}: {m}")) }
}

pub fn hmac_hex(secret: &[u8], message: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(message);
    hex(&mac.finalize().into_bytes())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// One header's value, case-insensitively; the first when repeated.
pub fn header_value<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// Headers given as a JSON object (string values; an array value gives its first string).
pub fn headers_from_json(value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Value::Object(map) = value {
        for (k, v) in map {
            match v {
                Value::String(s) => out.push((k.clone(), s.clone())),
                Value::Array(items) => {
                    if let Some(s) = items.first().and_then(Value::as_str) {
                        out.push((k.clone(), s.to_string()))
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn within(timestamp: f64, now: f64, tolerance: f64) -> bool {
    (now - timestamp).abs() <= tolerance
}

fn verify_v1(header: &str, raw: &str, secret: &str, now: f64, tolerance: f64) -> Option<&'static str> {
    let mut timestamp: Option<&str> = None;
    let mut candidates: Vec<String> = Vec::new();
    for item in header.split(',') {
        let Some(sep) = item.find('=').filter(|s| *s > 0) else { return Some("malformed_header") };
        let (name, value) = (item[..sep].trim(), item[sep + 1..].trim());
        if name == "t" {
            // Exactly one decimal timestamp: two would let an attacker pair one with a replayed signature.
            if timestamp.is_some() || value.is_empty() || value.len() > 15 || !value.bytes().all(|c| c.is_ascii_digit()) {
                return Some("malformed_header");
            }
            timestamp = Some(value);
        } else if name == "v1" {
            candidates.push(value.to_lowercase());
        }
    }
    let Some(timestamp) = timestamp else { return Some("malformed_header") };
    if candidates.is_empty() {
        return Some("malformed_header");
    }
    let expected = hmac_hex(secret.as_bytes(), format!("{timestamp}.{raw}").as_bytes());
    let mut matched = false;
    for c in &candidates {
        let well_formed = c.len() == 64 && c.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if well_formed && constant_time_eq(c.as_bytes(), expected.as_bytes()) {
            matched = true;
        }
    }
    if !matched {
        return Some("bad_signature");
    }
    let t: f64 = timestamp.parse().unwrap_or(f64::NAN);
    if within(t, now, tolerance) {
        None
    } else {
        Some("stale_timestamp")
    }
}

fn verify_v0(header: &str, raw: &str, secret: &str, now: f64, tolerance: f64) -> Option<&'static str> {
    let h = header.trim();
    let Some(given) = h.strip_prefix("sha256=").filter(|g| !g.is_empty() && g.bytes().all(|c| c.is_ascii_hexdigit())) else {
        return Some("malformed_header");
    };
    let Ok(payload) = serde_json::from_str::<Value>(raw) else { return Some("malformed_body") };
    let Ok(canonical) = canonical_string(&payload) else { return Some("malformed_body") };
    let expected = hmac_hex(secret.as_bytes(), canonical.as_bytes());
    if !constant_time_eq(given.to_lowercase().as_bytes(), expected.as_bytes()) {
        return Some("bad_signature");
    }
    let ts = match payload.get("timestamp") {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        _ => return Some("malformed_body"),
    };
    if ts.fract() != 0.0 || ts.abs() > 9007199254740991.0 {
        return Some("malformed_body");
    }
    if within(ts, now, tolerance) {
        None
    } else {
        Some("stale_timestamp")
    }
}

/// Ok(()) when the delivery is authentic and fresh; otherwise the error with a stable code. Pass the body
/// exactly as received. v1 is used whenever its header is present (a failing v1 is not retried as v0).
pub fn verify_webhook(
    body: &[u8],
    headers: &[(String, String)],
    secret: &str,
    tolerance_seconds: f64,
    now_seconds: f64,
) -> Result<(), WebhookVerificationError> {
    if secret.is_empty() {
        return Err(fail("missing_secret", None));
    }
    let Ok(raw) = std::str::from_utf8(body) else { return Err(fail("malformed_body", None)) };
    let v1 = header_value(headers, "x-service-signature").filter(|v| !v.trim().is_empty());
    let v0 = header_value(headers, "x-service-webhook-signature").filter(|v| !v.trim().is_empty());
    let (scheme, problem) = match (v1, v0) {
        (Some(v1), _) => ("v1", verify_v1(v1, raw, secret, now_seconds, tolerance_seconds)),
        (None, Some(v0)) => ("v0", verify_v0(v0, raw, secret, now_seconds, tolerance_seconds)),
        (None, None) => return Err(fail("missing_headers", None)),
    };
    match problem {
        Some(code) => Err(fail(code, Some(scheme))),
        None => Ok(()),
    }
}

/// The X-Service-Signature value a sender puts on `body`.
pub fn sign_webhook_v1(body: &str, secret: &str, timestamp: i64) -> String {
    format!("t={timestamp},v1={}", hmac_hex(secret.as_bytes(), format!("{timestamp}.{body}").as_bytes()))
}

pub fn sign_webhook_v0(payload: &Value, secret: &str) -> Result<String, crate::wire::jcs::JcsError> {
    Ok(format!("sha256={}", hmac_hex(secret.as_bytes(), canonical_string(payload)?.as_bytes())))
}

/// In-memory dedupe keyed by event_id for one receiver process; ids are remembered for `ttl_seconds` from first
/// sight. Call `seen` only after verify_webhook passed, so unsigned traffic cannot fill it.
pub struct WebhookDeduper {
    ttl: f64,
    order: VecDeque<(String, f64)>,
    first_seen: HashMap<String, f64>,
}

impl WebhookDeduper {
    pub fn new(ttl_seconds: f64) -> Self {
        WebhookDeduper { ttl: ttl_seconds, order: VecDeque::new(), first_seen: HashMap::new() }
    }

    /// True when this event_id was already seen within the TTL; else records it. `now` in seconds.
    pub fn seen_at(&mut self, event_id: &str, now: f64) -> bool {
        while let Some((key, first)) = self.order.front() {
            if now - first < self.ttl {
                break;
            }
            self.first_seen.remove(key);
            self.order.pop_front();
        }
        if self.first_seen.contains_key(event_id) {
            return true;
        }
        self.first_seen.insert(event_id.to_string(), now);
        self.order.push_back((event_id.to_string(), now));
        false
    }

    pub fn len(&self) -> usize {
        self.first_seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first_seen.is_empty()
    }

    /// Idempotency-Key, else X-Service-Webhook-Event-Id, else the body's event_id.
    pub fn event_id_of(body: &[u8], headers: &[(String, String)]) -> Option<String> {
        let from_header = header_value(headers, "idempotency-key")
            .filter(|v| !v.is_empty())
            .or_else(|| header_value(headers, "x-service-webhook-event-id").filter(|v| !v.is_empty()));
        if let Some(h) = from_header {
            return Some(h.to_string());
        }
        let parsed: Value = serde_json::from_slice(body).ok()?;
        parsed.get("event_id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
    }
}
