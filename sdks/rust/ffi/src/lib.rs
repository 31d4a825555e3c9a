//! The C ABI of the Privacy Relay engine (library `privacy_relay`, header `privacy_relay.h`).
//!
//! Every function takes NUL-terminated UTF-8 strings (JSON text where the header says so) and returns an `int`:
//! 0 on success, a stable error number otherwise. Results are written to `*out` as a string the library
//! allocated; on failure `*out` receives `{"error":{"code":"...","message":"..."}}` instead. Every string the
//! library hands out is freed with `pr_string_free`; every detokeniser handle with `pr_detokeniser_free`.
//! No panic crosses the boundary: each entry point runs under `catch_unwind` and reports `internal_error`.

use privacy_relay::attestation::{build_attestation, encode_attestation_header, AttestationInput, EngineIdentity};
use privacy_relay::tokeniser::request::{tokenise_request, Route, TokeniseError};
use privacy_relay::tokeniser::session::{idempotent_alias_secret, MediaPolicy, NameModel, SessionOptions, TokeniserSession};
use privacy_relay::tokeniser::text::Utf16Index;
use privacy_relay::tokeniser::{detect_spans, detokenise, tokenise_text, StreamingDetokeniser, ENTITY_TYPES};
use privacy_relay::verify::transparency::{verify_consistency, verify_inclusion};
use privacy_relay::verify::webhook::{headers_from_json, sign_webhook_v0, sign_webhook_v1, verify_webhook, DEFAULT_TOLERANCE_SECONDS};
use privacy_relay::verify::{verify_chain, verify_chain_export, verify_consistency_proof, verify_inclusion_proof, verify_receipt, Jwks};
use privacy_relay::wire::ecdsa::SigningKey;
use privacy_relay::wire::hashing::{hex, json_body_sha256_hex, merkle_leaf_hash, merkle_node_hash, sha256, unhex};
use privacy_relay::wire::jcs::canonical_string;
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub const PR_OK: c_int = 0;
pub const PR_E_NULL_ARGUMENT: c_int = 1;
pub const PR_E_INVALID_UTF8: c_int = 2;
pub const PR_E_INVALID_JSON: c_int = 3;
pub const PR_E_INVALID_ARGUMENT: c_int = 4;
pub const PR_E_INVALID_REQUEST: c_int = 5;
pub const PR_E_UNSUPPORTED_FIELD: c_int = 6;
pub const PR_E_JWKS: c_int = 7;
pub const PR_E_INVALID_KEY: c_int = 8;
pub const PR_E_UNSUPPORTED_CONTENT: c_int = 9;
pub const PR_E_NESTING_TOO_DEEP: c_int = 10;
pub const PR_E_INTERNAL: c_int = 100;

/// The ABI's version: bumped on any incompatible change of a signature or of a JSON shape.
pub const PR_ABI_VERSION: c_int = 1;

/// An error crossing the boundary: its number, its stable code, a message, optional details.
struct Failure {
    number: c_int,
    code: &'static str,
    message: String,
    details: Option<Value>,
}

impl Failure {
    fn new(number: c_int, code: &'static str, message: impl Into<String>) -> Self {
        Failure { number, code, message: message.into(), details: None }
    }
    fn json(&self) -> String {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.details {
            error["details"] = d.clone();
        }
        json!({ "error": error }).to_string()
    }
}

fn code_name(number: c_int) -> &'static str {
    match number {
        PR_E_NULL_ARGUMENT => "null_argument",
        PR_E_INVALID_UTF8 => "invalid_utf8",
        PR_E_INVALID_JSON => "invalid_json",
        PR_E_INVALID_ARGUMENT => "invalid_argument",
        PR_E_INVALID_REQUEST => "invalid_request",
        PR_E_UNSUPPORTED_FIELD => "unsupported_field",
        PR_E_JWKS => "jwks_invalid",
        PR_E_INVALID_KEY => "invalid_key",
        PR_E_UNSUPPORTED_CONTENT => "unsupported_content",
        PR_E_NESTING_TOO_DEEP => "nesting_too_deep",
        PR_E_INTERNAL => "internal_error",
        _ => "unknown",
    }
}

thread_local! {
    static LAST_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
}

type Outcome = Result<String, Failure>;

fn to_c(s: String) -> Result<*mut c_char, Failure> {
    CString::new(s)
        .map(CString::into_raw)
        .map_err(|_| Failure::new(PR_E_INVALID_ARGUMENT, "invalid_argument", "the result holds a NUL character, which a C string cannot carry"))
}

/// Runs one entry point: catches panics, writes the result or the error JSON to `*out`.
fn run(out: *mut *mut c_char, body: impl FnOnce() -> Outcome) -> c_int {
    if out.is_null() {
        let f = Failure::new(PR_E_NULL_ARGUMENT, "null_argument", "out is NULL: nowhere to write the result");
        LAST_ERROR.with(|e| *e.borrow_mut() = Some(f.json()));
        return f.number;
    }
    // SAFETY: `out` is non-null and points to a `char*` the caller owns.
    unsafe { *out = std::ptr::null_mut() };
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(Failure::new(PR_E_INTERNAL, "internal_error", format!("the engine failed unexpectedly: {what}")))
    });
    let (number, text) = match result.and_then(|s| to_c(s).map(|p| (PR_OK, p))) {
        Ok((n, p)) => {
            LAST_ERROR.with(|e| *e.borrow_mut() = None);
            (n, p)
        }
        Err(f) => {
            let json = f.json();
            LAST_ERROR.with(|e| *e.borrow_mut() = Some(json.clone()));
            (f.number, CString::new(json).map(CString::into_raw).unwrap_or(std::ptr::null_mut()))
        }
    };
    // SAFETY: as above.
    unsafe { *out = text };
    number
}

/// A required C string argument as UTF-8.
fn arg<'a>(name: &str, p: *const c_char) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::new(PR_E_NULL_ARGUMENT, "null_argument", format!("{name} is NULL")));
    }
    // SAFETY: non-null, NUL-terminated per the ABI contract.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::new(PR_E_INVALID_UTF8, "invalid_utf8", format!("{name} is not valid UTF-8 (invalid byte at offset {})", e.valid_up_to()))
    })
}

/// An optional C string argument (NULL or "" = absent).
fn opt_arg<'a>(name: &str, p: *const c_char) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    arg(name, p).map(|s| (!s.trim().is_empty()).then_some(s))
}

fn parse_json(name: &str, text: &str) -> Result<Value, Failure> {
    serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let surrogate = message.contains("escape") && has_lone_surrogate_escape(text);
        let why = if surrogate { format!("it holds a lone surrogate escape (\\uD800-\\uDFFF without its pair), which no UTF-8 text can carry ({message})") } else { message };
        Failure::new(PR_E_INVALID_JSON, "invalid_json", format!("{name} is not JSON text: {why}"))
    })
}

/// True when `text` has a \uD800-\uDFFF escape that is not a high surrogate followed by a low one.
fn has_lone_surrogate_escape(text: &str) -> bool {
    let b = text.as_bytes();
    let unit = |i: usize| -> Option<u16> {
        (b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u')).then(|| std::str::from_utf8(b.get(i + 2..i + 6)?).ok().and_then(|h| u16::from_str_radix(h, 16).ok()))?
    };
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\\') {
            i += 2;
            continue;
        }
        if let Some(u) = unit(i) {
            if (0xDC00..=0xDFFF).contains(&u) {
                return true;
            }
            if (0xD800..=0xDBFF).contains(&u) {
                match unit(i + 6) {
                    Some(low) if (0xDC00..=0xDFFF).contains(&low) => {
                        i += 12;
                        continue;
                    }
                    _ => return true,
                }
            }
            i += 6;
            continue;
        }
        i += 1;
    }
    false
}

fn json_arg(name: &str, p: *const c_char) -> Result<Value, Failure> {
    parse_json(name, arg(name, p)?)
}

fn options_arg(name: &str, p: *const c_char) -> Result<Map<String, Value>, Failure> {
    match opt_arg(name, p)? {
        None => Ok(Map::new()),
        Some(text) => match parse_json(name, text)? {
            Value::Object(m) => Ok(m),
            _ => Err(Failure::new(PR_E_INVALID_ARGUMENT, "invalid_argument", format!("{name} must be a JSON object"))),
        },
    }
}

fn bad(message: impl Into<String>) -> Failure {
    Failure::new(PR_E_INVALID_ARGUMENT, "invalid_argument", message)
}

fn hex_option(o: &Map<String, Value>, key: &str) -> Result<Option<Vec<u8>>, Failure> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => unhex(s).filter(|b| !b.is_empty()).map(Some).ok_or_else(|| bad(format!("{key} must be hex"))),
        Some(_) => Err(bad(format!("{key} must be a hex string"))),
    }
}

fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0).floor()
}

fn session_options(o: &Map<String, Value>) -> Result<SessionOptions, Failure> {
    let known = [
        "names",
        "secret_hex",
        "stable_alias_secret_hex",
        "phone_regions",
        "device_alias_secret_hex",
        "idempotency_key",
        "identifier_secret_hex",
        "media_policy",
        "passthrough_paths",
    ];
    if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(bad(format!("unknown option {k} (known: {})", known.join(", "))));
    }
    let names = match o.get("names").and_then(Value::as_str) {
        None | Some("builtin") => NameModel::Builtin,
        Some("off") => NameModel::Off,
        Some(other) => return Err(bad(format!("names must be \"builtin\" or \"off\", not {other:?}"))),
    };
    let mut secret = hex_option(o, "secret_hex")?;
    if let Some(key) = o.get("idempotency_key").and_then(Value::as_str) {
        let device = hex_option(o, "device_alias_secret_hex")?.ok_or_else(|| bad("idempotency_key needs device_alias_secret_hex"))?;
        secret = Some(idempotent_alias_secret(&device, key).to_vec());
    }
    let phone_regions = match o.get("phone_regions") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|r| r.as_str().map(str::to_string).ok_or_else(|| bad("phone_regions must be region codes")))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err(bad("phone_regions must be an array of region codes")),
    };
    if let Some(regions) = &phone_regions {
        if let Some(r) = regions.iter().find(|r| privacy_relay::tokeniser::phone::region_id(r).is_none()) {
            return Err(bad(format!("unknown phone region {r}")));
        }
    }
    let media_policy = match o.get("media_policy") {
        None | Some(Value::Null) => MediaPolicy::Refuse,
        Some(Value::String(s)) => MediaPolicy::parse(s).ok_or_else(|| bad(format!("media_policy must be refuse, redact or pass, not {s:?}")))?,
        Some(_) => return Err(bad("media_policy must be a string")),
    };
    let passthrough_paths = match o.get("passthrough_paths") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|p| match p.as_str() {
                Some(s) if s.is_empty() || s.starts_with('/') => Ok(s.to_string()),
                _ => Err(bad("passthrough_paths must be JSON pointers (\"/a/*/b\")")),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(bad("passthrough_paths must be an array of JSON pointers")),
    };
    // The device alias secret keys the end-user identifiers' USER_ aliases unless one is named on its own.
    let identifier_secret = match hex_option(o, "identifier_secret_hex")? {
        Some(s) => Some(s),
        None => hex_option(o, "device_alias_secret_hex")?,
    };
    Ok(SessionOptions {
        names,
        secret,
        stable_alias_secret: hex_option(o, "stable_alias_secret_hex")?,
        phone_regions,
        identifier_secret,
        media_policy,
        passthrough_paths,
    })
}

fn map_json(map: &[(String, String)]) -> Value {
    Value::Array(map.iter().map(|(a, o)| json!([a, o])).collect())
}

fn map_from_json(v: &Value) -> Result<Vec<(String, String)>, Failure> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|p| match p.as_array().map(Vec::as_slice) {
                Some([Value::String(a), Value::String(o)]) => Ok((a.clone(), o.clone())),
                _ => Err(bad("map entries must be [alias, original] string pairs")),
            })
            .collect(),
        Value::Object(m) => m
            .iter()
            .map(|(a, o)| o.as_str().map(|o| (a.clone(), o.to_string())).ok_or_else(|| bad("map values must be strings")))
            .collect(),
        _ => Err(bad("map must be an array of [alias, original] pairs or an object")),
    }
}

fn jwks(p: *const c_char) -> Result<Jwks, Failure> {
    Jwks::new(&json_arg("jwks_json", p)?).map_err(|e| Failure::new(PR_E_JWKS, "jwks_invalid", e.message))
}

/// `{ "id", "version", "sha256", "abi_version", ... }`: what this library is.
///
/// # Safety
/// `out` must be NULL or point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn pr_engine_info(out: *mut *mut c_char) -> c_int {
    run(out, || {
        let [given, surnames, places, calendar] = privacy_relay::tokeniser::names::gazetteer_sizes();
        Ok(json!({
            "id": privacy_relay::ENGINE_ID,
            "version": privacy_relay::ENGINE_VERSION,
            "sha256": privacy_relay::ENGINE_SHA256,
            "abi_version": PR_ABI_VERSION,
            "routes": privacy_relay::tokeniser::egress::egress_routes(),
            "egress_policy": {"version": privacy_relay::tokeniser::egress::policy_identity().0, "sha256": privacy_relay::tokeniser::egress::policy_identity().1},
            "entity_types": ENTITY_TYPES.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "name_models": ["builtin", "off"],
            "default_phone_regions": privacy_relay::tokeniser::phone::DEFAULT_PHONE_REGIONS,
            "gazetteer": {"given_names": given, "surnames": surnames, "place_words": places, "calendar_words": calendar}
        })
        .to_string())
    })
}

/// Tokenises one request body. `route`: chat.completions | messages | embeddings. `options_json` (NULL = {}):
/// names, secret_hex, stable_alias_secret_hex, phone_regions, device_alias_secret_hex + idempotency_key.
/// Result: `{ "body", "body_text", "map", "detectors_fired", "name_model_skipped" }`; send `body_text` as is.
///
/// # Safety
/// Pointers must be NULL or valid NUL-terminated strings; `out` must point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn pr_tokenise_request(route: *const c_char, body_json: *const c_char, options_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let route_name = arg("route", route)?;
        let route = Route::parse(route_name)
            .ok_or_else(|| bad(format!("unknown route {route_name:?} (chat.completions, messages, messages.count_tokens, embeddings, responses)")))?;
        let body = json_arg("body_json", body_json)?;
        let options = session_options(&options_arg("options_json", options_json)?)?;
        let t = tokenise_request(route, &body, options).map_err(|e| match &e {
            TokeniseError::InvalidRequestBody(m) => Failure::new(PR_E_INVALID_REQUEST, "invalid_request", m.clone()),
            TokeniseError::Egress(r) => Failure {
                number: match r.code {
                    "unsupported_content" => PR_E_UNSUPPORTED_CONTENT,
                    "nesting_too_deep" => PR_E_NESTING_TOO_DEEP,
                    _ => PR_E_UNSUPPORTED_FIELD,
                },
                code: r.code,
                message: r.message.clone(),
                details: Some(r.details()),
            },
        })?;
        let passthrough = t.passthrough_claim().unwrap_or(Value::Array(Vec::new()));
        Ok(json!({
            "body": t.body,
            "body_text": String::from_utf8(t.body_bytes).unwrap_or_default(),
            "map": map_json(&t.map),
            "passthrough": passthrough,
            "detectors_fired": t.detectors_fired,
            "name_model_skipped": t.name_model_skipped
        })
        .to_string())
    })
}

/// Tokenises one text. Result: `{ "text", "map", "detectors_fired" }`.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_tokenise_text(text: *const c_char, options_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let text = arg("text", text)?;
        let mut session = TokeniserSession::new(session_options(&options_arg("options_json", options_json)?)?);
        let tokenised = tokenise_text(text, &mut session);
        Ok(json!({"text": tokenised, "map": map_json(session.map()), "detectors_fired": session.detectors_fired()}).to_string())
    })
}

/// The values the engine finds in `text`: `{ "spans": [{ "start", "end", "type", "value", "byte_start",
/// "byte_end" }] }` with `start`/`end` in UTF-16 code units (the vectors' unit) and byte offsets into the UTF-8.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_detect_spans(text: *const c_char, options_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let text = arg("text", text)?;
        let options = session_options(&options_arg("options_json", options_json)?)?;
        let index = Utf16Index::new(text);
        let spans: Vec<Value> = detect_spans(text, &options)
            .iter()
            .map(|s| {
                json!({"start": index.at(s.start), "end": index.at(s.end), "type": s.ty.as_str(), "value": &text[s.start..s.end], "byte_start": s.start, "byte_end": s.end})
            })
            .collect();
        Ok(json!({ "spans": spans }).to_string())
    })
}

/// Restores the originals of the aliases of `map_json` (`[[alias, original], ...]` or `{alias: original}`) in
/// `text`. Result: the plain text.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_detokenise(text: *const c_char, map_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let text = arg("text", text)?;
        let map: std::collections::HashMap<String, String> = map_from_json(&json_arg("map_json", map_json)?)?.into_iter().collect();
        Ok(detokenise(text, |a| map.get(a).cloned()))
    })
}

/// A streaming detokeniser for one response. Use it from one thread at a time; free it with `pr_detokeniser_free`.
pub struct PrDetokeniser {
    inner: StreamingDetokeniser,
}

/// Creates a streaming detokeniser for `map_json`. On success `*out_handle` is the handle and `*out` is "{}".
///
/// # Safety
/// `out_handle` and `out` must point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn pr_detokeniser_new(map_json: *const c_char, out_handle: *mut *mut PrDetokeniser, out: *mut *mut c_char) -> c_int {
    if !out_handle.is_null() {
        *out_handle = std::ptr::null_mut();
    }
    run(out, || {
        if out_handle.is_null() {
            return Err(Failure::new(PR_E_NULL_ARGUMENT, "null_argument", "out_handle is NULL"));
        }
        let map = map_from_json(&json_arg("map_json", map_json)?)?;
        let handle = Box::into_raw(Box::new(PrDetokeniser { inner: StreamingDetokeniser::new(map) }));
        // SAFETY: checked non-null above.
        unsafe { *out_handle = handle };
        Ok("{}".into())
    })
}

fn handle<'a>(d: *mut PrDetokeniser) -> Result<&'a mut PrDetokeniser, Failure> {
    // SAFETY: a non-null handle came from pr_detokeniser_new and was not freed (the ABI contract).
    unsafe { d.as_mut() }.ok_or_else(|| Failure::new(PR_E_NULL_ARGUMENT, "null_argument", "detokeniser is NULL"))
}

/// Feeds the next chunk; `*out` is the text that is safe to show now (possibly empty).
///
/// # Safety
/// `d` must be a live handle from `pr_detokeniser_new`.
#[no_mangle]
pub unsafe extern "C" fn pr_detokeniser_push(d: *mut PrDetokeniser, chunk: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let d = handle(d)?;
        let chunk = arg("chunk", chunk)?;
        Ok(d.inner.push(chunk))
    })
}

/// Ends the stream; `*out` is whatever was held back. The handle stays valid (and empty) until freed.
///
/// # Safety
/// `d` must be a live handle from `pr_detokeniser_new`.
#[no_mangle]
pub unsafe extern "C" fn pr_detokeniser_finish(d: *mut PrDetokeniser, out: *mut *mut c_char) -> c_int {
    run(out, || Ok(handle(d)?.inner.flush()))
}

/// Frees a handle (NULL is ignored).
///
/// # Safety
/// `d` must be NULL or a live handle; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn pr_detokeniser_free(d: *mut PrDetokeniser) {
    if !d.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(d))));
    }
}

fn now_option(o: &Map<String, Value>) -> Result<f64, Failure> {
    match o.get("now_seconds") {
        None | Some(Value::Null) => Ok(now()),
        Some(Value::Number(n)) => n.as_f64().ok_or_else(|| bad("now_seconds must be a number")),
        Some(_) => Err(bad("now_seconds must be a number (Unix seconds)")),
    }
}

/// Verifies a receipt (v1, v2, failed, v3 countersignature) or a v3 attestation offline. `receipt`: the header
/// value or JSON text. `options_json`: now_seconds, previous, attestation (header value, JSON text or object).
/// Result: `{ "valid", "reason", "checks": [{ "label", "status", "detail" }] }`; an invalid receipt is a result.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_verify_receipt(receipt: *const c_char, jwks_json: *const c_char, options_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let receipt = Value::String(arg("receipt", receipt)?.to_string());
        let jwks = jwks(jwks_json)?;
        let o = options_arg("options_json", options_json)?;
        let r = verify_receipt(&receipt, &jwks, now_option(&o)?, o.get("previous"), o.get("attestation"))
            .map_err(|e| Failure::new(PR_E_JWKS, "jwks_invalid", e.message))?;
        Ok(r.to_json().to_string())
    })
}

/// Verifies the receipts of one chain in chain order (`receipts_json`: an array of header values, JSON texts or
/// objects). Result: `{ "valid", "chain_id", "first_seq", "last_seq", "verified", "break" }`.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_verify_chain(receipts_json: *const c_char, jwks_json: *const c_char, options_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let receipts = match json_arg("receipts_json", receipts_json)? {
            Value::Array(items) => items,
            _ => return Err(bad("receipts_json must be a JSON array")),
        };
        let jwks = jwks(jwks_json)?;
        let o = options_arg("options_json", options_json)?;
        let allow_gaps = o.get("allow_gaps").and_then(Value::as_bool).unwrap_or(false);
        let r = verify_chain(&receipts, &jwks, now_option(&o)?, allow_gaps).map_err(|e| Failure::new(PR_E_JWKS, "jwks_invalid", e.message))?;
        Ok(r.to_json().to_string())
    })
}

/// Verifies a transparency-log inclusion proof against a signed tree head (`sth_json` NULL: the proof's own
/// `sth`). `options_json`: receipt (to bind the proof to it). Result as `pr_verify_receipt`.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_verify_inclusion_proof(
    proof_json: *const c_char,
    sth_json: *const c_char,
    jwks_json: *const c_char,
    options_json: *const c_char,
    out: *mut *mut c_char,
) -> c_int {
    run(out, || {
        let proof = json_arg("proof_json", proof_json)?;
        let sth = match opt_arg("sth_json", sth_json)? {
            Some(t) => Some(parse_json("sth_json", t)?),
            None => None,
        };
        let jwks = jwks(jwks_json)?;
        let o = options_arg("options_json", options_json)?;
        let r = verify_inclusion_proof(&proof, sth.as_ref(), &jwks, o.get("receipt")).map_err(|e| Failure::new(PR_E_JWKS, "jwks_invalid", e.message))?;
        Ok(r.to_json().to_string())
    })
}

/// Verifies a transparency-log consistency proof: the log whose signed head you kept (`old_head_json`) is a prefix of
/// the newer one (`options_json`: new_head; default the proof's own `sth`). Result as `pr_verify_receipt`.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_verify_consistency_proof(
    proof_json: *const c_char,
    old_head_json: *const c_char,
    jwks_json: *const c_char,
    options_json: *const c_char,
    out: *mut *mut c_char,
) -> c_int {
    run(out, || {
        let proof = json_arg("proof_json", proof_json)?;
        let old_head = json_arg("old_head_json", old_head_json)?;
        let jwks = jwks(jwks_json)?;
        let o = options_arg("options_json", options_json)?;
        let r = verify_consistency_proof(&proof, &old_head, &jwks, o.get("new_head")).map_err(|e| Failure::new(PR_E_JWKS, "jwks_invalid", e.message))?;
        Ok(r.to_json().to_string())
    })
}

/// Verifies an export of receipt chains (`exported`: receipt_chain_export's JSON, its JSON Lines text, or a JSON
/// array of receipts). `options_json`: now_seconds, allow_gaps. Result: `{ "valid", "chains": [ as pr_verify_chain ] }`.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_verify_chain_export(exported: *const c_char, jwks_json: *const c_char, options_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let exported = Value::String(arg("exported", exported)?.to_string());
        let jwks = jwks(jwks_json)?;
        let o = options_arg("options_json", options_json)?;
        let allow_gaps = o.get("allow_gaps").and_then(Value::as_bool).unwrap_or(false);
        match verify_chain_export(&exported, &jwks, now_option(&o)?, allow_gaps).map_err(|e| Failure::new(PR_E_JWKS, "jwks_invalid", e.message))? {
            Err(problem) => Err(bad(problem)),
            Ok((valid, chains)) => Ok(json!({"valid": valid, "chains": chains.iter().map(|c| c.to_json()).collect::<Vec<_>>()}).to_string()),
        }
    })
}

/// Verifies a webhook delivery: `body`/`body_len` exactly as received (any bytes), `headers_json` an object of
/// header names to values, `secret` the endpoint secret. `options_json`: tolerance_seconds (300), now_seconds.
/// Result: `{ "ok": true }` or `{ "ok": false, "code", "message" }` (missing_headers, malformed_header,
/// bad_signature, stale_timestamp, malformed_body, missing_secret): a rejected delivery is a result.
///
/// # Safety
/// `body` must point to `body_len` readable bytes (or be NULL with `body_len` 0); strings as above.
#[no_mangle]
pub unsafe extern "C" fn pr_verify_webhook(
    body: *const u8,
    body_len: usize,
    headers_json: *const c_char,
    secret: *const c_char,
    options_json: *const c_char,
    out: *mut *mut c_char,
) -> c_int {
    run(out, || {
        let body: &[u8] = if body.is_null() {
            if body_len != 0 {
                return Err(Failure::new(PR_E_NULL_ARGUMENT, "null_argument", "body is NULL but body_len is not 0"));
            }
            &[]
        } else {
            // SAFETY: the caller guarantees body_len readable bytes.
            unsafe { std::slice::from_raw_parts(body, body_len) }
        };
        let headers = json_arg("headers_json", headers_json)?;
        if !headers.is_object() {
            return Err(bad("headers_json must be a JSON object of header names to values"));
        }
        let secret = arg("secret", secret)?;
        let o = options_arg("options_json", options_json)?;
        let tolerance = match o.get("tolerance_seconds") {
            None | Some(Value::Null) => DEFAULT_TOLERANCE_SECONDS,
            Some(v) => v.as_f64().ok_or_else(|| bad("tolerance_seconds must be a number"))?,
        };
        Ok(match verify_webhook(body, &headers_from_json(&headers), secret, tolerance, now_option(&o)?) {
            Ok(()) => json!({"ok": true}),
            Err(e) => json!({"ok": false, "code": e.code, "message": e.message}),
        }
        .to_string())
    })
}

/// Builds and signs the v3 attestation of one egress body. `input_json`: route, body (the exact text sent),
/// body_is_canonical (true when `body` is tokenise_request's body_text), detectors_fired, engine ({id, version,
/// sha256}; default this engine), trust_tier, jti, iat, passthrough, deterministic (RFC 6979 without added
/// randomness). `private_jwk_json`: the device key. Result: `{ "envelope", "header", "engine_header" }`.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_build_attestation(input_json: *const c_char, private_jwk_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let input = json_arg("input_json", input_json)?;
        let key = SigningKey::from_private_jwk(&json_arg("private_jwk_json", private_jwk_json)?)
            .map_err(|e| Failure::new(PR_E_INVALID_KEY, "invalid_key", e))?;
        let s = |k: &str| input.get(k).and_then(Value::as_str);
        let route = s("route").ok_or_else(|| bad("input.route must be a string"))?;
        if !privacy_relay::attestation::ATTESTATION_ROUTES.contains(&route) {
            return Err(bad(format!("input.route must be one of {}", privacy_relay::attestation::ATTESTATION_ROUTES.join(", "))));
        }
        let body = s("body").ok_or_else(|| bad("input.body must be the body text as sent"))?;
        let fired = match input.get("detectors_fired") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(bad("input.detectors_fired must be an object")),
        };
        let engine = match input.get("engine") {
            None | Some(Value::Null) => privacy_relay::engine_identity(),
            Some(e) => EngineIdentity {
                id: e.get("id").and_then(Value::as_str).ok_or_else(|| bad("input.engine.id must be a string"))?.into(),
                version: e.get("version").and_then(Value::as_str).ok_or_else(|| bad("input.engine.version must be a string"))?.into(),
                sha256: e.get("sha256").and_then(Value::as_str).unwrap_or(privacy_relay::ENGINE_SHA256).into(),
            },
        };
        let attestation_input = AttestationInput {
            route,
            body_bytes: body.as_bytes(),
            body_is_canonical: input.get("body_is_canonical").and_then(Value::as_bool).unwrap_or(false),
            detectors_fired: fired,
            engine: engine.clone(),
            trust_tier: s("trust_tier"),
            jti: s("jti").map(str::to_string),
            iat: input.get("iat").and_then(Value::as_i64),
            passthrough: input.get("passthrough").cloned(),
            deterministic: input.get("deterministic").and_then(Value::as_bool).unwrap_or(false),
        };
        let envelope = build_attestation(&attestation_input, &key).map_err(|e| Failure::new(PR_E_INVALID_REQUEST, "invalid_request", format!("the body is not JSON: {e}")))?;
        let header = encode_attestation_header(&envelope).map_err(bad)?;
        Ok(json!({"envelope": envelope, "header": header, "engine_header": engine.header_value()}).to_string())
    })
}

/// A fresh device key: `{ "private_jwk", "public_jwk", "kid" }`. Store the private JWK readable by its owner only.
///
/// # Safety
/// `out` must point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn pr_generate_device_key(out: *mut *mut c_char) -> c_int {
    run(out, || {
        let key = SigningKey::generate();
        Ok(json!({"private_jwk": key.private_jwk(), "public_jwk": key.public_jwk(), "kid": key.kid()}).to_string())
    })
}

/// The RFC 8785 (JCS) text of a JSON text.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_canonicalize(json_text: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || canonical_string(&json_arg("json_text", json_text)?).map_err(|e| bad(e.0)))
}

/// Reads `len` bytes at `p` (NULL only with `len` 0).
unsafe fn bytes_arg<'a>(name: &str, p: *const u8, len: usize) -> Result<&'a [u8], Failure> {
    if p.is_null() {
        if len != 0 {
            return Err(Failure::new(PR_E_NULL_ARGUMENT, "null_argument", format!("{name} is NULL but its length is not 0")));
        }
        return Ok(&[]);
    }
    // SAFETY: the caller guarantees len readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A hash of `data`/`len`, as lowercase hex. `kind`: "sha256" (of the bytes), "json_body_sha256" (of the JCS form of
/// a JSON body: egress_sha256, hash_upstream_request), "merkle_leaf" (SHA-256(0x00 || data)), "merkle_node"
/// (SHA-256(0x01 || left || right), `data` the 64 bytes left || right).
///
/// # Safety
/// `data` must point to `len` readable bytes (or be NULL with `len` 0); strings as `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_hash(kind: *const c_char, data: *const u8, len: usize, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let kind = arg("kind", kind)?;
        let data = unsafe { bytes_arg("data", data, len) }?;
        Ok(match kind {
            "sha256" => hex(&sha256(data)),
            "json_body_sha256" => json_body_sha256_hex(data).map_err(|e| Failure::new(PR_E_INVALID_JSON, "invalid_json", e))?,
            "merkle_leaf" => hex(&merkle_leaf_hash(data)),
            "merkle_node" if data.len() == 64 => hex(&merkle_node_hash(&data[..32], &data[32..])),
            "merkle_node" => return Err(bad("merkle_node takes the 64 bytes left || right")),
            other => return Err(bad(format!("unknown hash kind {other:?} (sha256, json_body_sha256, merkle_leaf, merkle_node)"))),
        })
    })
}

/// The signature header a webhook sender puts on a delivery. `scheme` "v1": the X-Service-Signature value
/// `t=<timestamp>,v1=<hmac>` of `body` (the exact text sent; `options_json`: timestamp, required); "v0": the
/// `sha256=<hmac>` of the JCS form of `body` (the payload's JSON text).
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_sign_webhook(scheme: *const c_char, body: *const c_char, secret: *const c_char, options_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let scheme = arg("scheme", scheme)?;
        let secret = arg("secret", secret)?;
        let o = options_arg("options_json", options_json)?;
        match scheme {
            "v1" => {
                let body = arg("body", body)?;
                let t = o.get("timestamp").and_then(Value::as_i64).ok_or_else(|| bad("v1 needs options_json.timestamp (integer seconds)"))?;
                Ok(sign_webhook_v1(body, secret, t))
            }
            "v0" => sign_webhook_v0(&json_arg("body", body)?, secret).map_err(|e| bad(e.0)),
            other => Err(bad(format!("unknown webhook signature scheme {other:?} (v1, v0)"))),
        }
    })
}

/// The tag of an alias (sdks/vectors/aliases.json "tags"): HMAC-SHA256 of `message`/`len` (bytes: a stable
/// alias's message holds NUL) under the hex secret, its first characters in the tag alphabet. `kind` "request"
/// (4 characters; message "TYPE_index#attempt") or "stable" (10; message "TYPE\0value"). Result:
/// `{ "hmac_sha256", "tag" }`.
///
/// # Safety
/// `message` must point to `len` readable bytes (or be NULL with `len` 0); strings as `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_alias_tag(kind: *const c_char, secret_hex: *const c_char, message: *const u8, len: usize, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let length = match arg("kind", kind)? {
            "request" => privacy_relay::tokeniser::REQUEST_TAG_LENGTH,
            "stable" => privacy_relay::tokeniser::STABLE_TAG_LENGTH,
            other => return Err(bad(format!("unknown alias kind {other:?} (request, stable)"))),
        };
        let secret = unhex(arg("secret_hex", secret_hex)?).ok_or_else(|| bad("secret_hex is not hex"))?;
        let message = unsafe { bytes_arg("message", message, len) }?;
        let mac = privacy_relay::verify::webhook::hmac_hex(&secret, message);
        let tag = privacy_relay::tokeniser::tag_from_mac(&unhex(&mac).unwrap_or_default(), length);
        Ok(json!({"hmac_sha256": mac, "tag": tag}).to_string())
    })
}

/// Whether `text` is exactly one alias (the alias pattern, anchored): `true` or `false`.
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_is_alias(text: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || Ok(privacy_relay::tokeniser::is_alias(arg("text", text)?).to_string()))
}

/// Verifies an RFC 9162 Merkle proof on bare hashes (hex). `kind` "inclusion": `input_json` {leaf_index,
/// tree_size, leaf_hash, root_hash, audit_path}; "consistency": {first, second, first_root, second_root,
/// consistency_path}. Result: `{ "valid": bool }`; a hash that is not hex or an index that is not a whole number
/// makes the proof invalid (a verdict, not an error).
///
/// # Safety
/// As `pr_tokenise_request`.
#[no_mangle]
pub unsafe extern "C" fn pr_verify_merkle_proof(kind: *const c_char, input_json: *const c_char, out: *mut *mut c_char) -> c_int {
    run(out, || {
        let kind = arg("kind", kind)?;
        let input = json_arg("input_json", input_json)?;
        let hash = |k: &str| input.get(k).and_then(Value::as_str).and_then(unhex).unwrap_or_default();
        let path = |k: &str| -> Vec<Vec<u8>> {
            input.get(k).and_then(Value::as_array).map(|a| a.iter().map(|h| h.as_str().and_then(unhex).unwrap_or_default()).collect()).unwrap_or_default()
        };
        let valid = match kind {
            "inclusion" => verify_inclusion(
                &hash("leaf_hash"),
                input.get("leaf_index").and_then(Value::as_u64).unwrap_or(u64::MAX),
                input.get("tree_size").and_then(Value::as_u64).unwrap_or(0),
                &path("audit_path"),
                &hash("root_hash"),
            ),
            "consistency" => verify_consistency(
                input.get("first").and_then(Value::as_u64).unwrap_or(0),
                input.get("second").and_then(Value::as_u64).unwrap_or(0),
                &hash("first_root"),
                &hash("second_root"),
                &path("consistency_path"),
            ),
            other => return Err(bad(format!("unknown proof kind {other:?} (inclusion, consistency)"))),
        };
        Ok(json!({ "valid": valid }).to_string())
    })
}

/// Frees a string this library returned (NULL is ignored).
///
/// # Safety
/// `s` must be NULL or a pointer this library returned and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn pr_string_free(s: *mut c_char) {
    if !s.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(CString::from_raw(s))));
    }
}

/// The error JSON of the last failed call on this thread (NULL when the last call succeeded); free it with
/// `pr_string_free`. Bindings whose calls may hop threads (Go) read the error from `*out` instead.
#[no_mangle]
pub extern "C" fn pr_last_error() -> *mut c_char {
    catch_unwind(|| LAST_ERROR.with(|e| e.borrow().clone()))
        .ok()
        .flatten()
        .and_then(|s| CString::new(s).ok())
        .map_or(std::ptr::null_mut(), CString::into_raw)
}

/// The stable code name of an error number ("invalid_json", ...), a static string: do not free it.
#[no_mangle]
pub extern "C" fn pr_error_code_name(number: c_int) -> *const c_char {
    let name: &'static CStr = match code_name(number) {
        "null_argument" => c"null_argument",
        "invalid_utf8" => c"invalid_utf8",
        "invalid_json" => c"invalid_json",
        "invalid_argument" => c"invalid_argument",
        "invalid_request" => c"invalid_request",
        "unsupported_field" => c"unsupported_field",
        "jwks_invalid" => c"jwks_invalid",
        "invalid_key" => c"invalid_key",
        "unsupported_content" => c"unsupported_content",
        "nesting_too_deep" => c"nesting_too_deep",
        "internal_error" => c"internal_error",
        _ => c"unknown",
    };
    name.as_ptr()
}

/// The ABI version this library implements (PR_ABI_VERSION in the header it was built with).
#[no_mangle]
pub extern "C" fn pr_abi_version() -> c_int {
    PR_ABI_VERSION
}

/// The payload of `pr_debug_panic`'s deliberate panic.
const DEBUG_PANIC: &str = "pr_debug_panic was called";

/// Panics inside the library on purpose and returns what any panic returns: `PR_E_INTERNAL` with an
/// `internal_error` JSON in `*out`. For the bindings' test suites (the boundary contains panics).
///
/// The panic unwinds and is caught exactly like any other; only its report is kept off stderr: on the first call a
/// panic hook is installed that drops this one payload and hands every other panic to the hook that was there
/// before (so the suites that prove containment no longer print a panic message and backtrace, and a real panic
/// still reports as it did).
///
/// # Safety
/// `out` must point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn pr_debug_panic(out: *mut *mut c_char) -> c_int {
    static QUIET_HOOK: std::sync::Once = std::sync::Once::new();
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&DEBUG_PANIC) {
                previous(info)
            }
        }));
    });
    run(out, || std::panic::panic_any(DEBUG_PANIC))
}
