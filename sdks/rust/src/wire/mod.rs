//! Wire formats: JCS, hashes, base64 codecs, ES256, envelopes.
pub mod b64;
pub mod ecdsa;
pub mod hashing;
pub mod jcs;

use serde_json::Value;

/// The JCS bytes of the envelope with both `sig` and `signature` removed: what every envelope signature covers.
pub fn signing_input(envelope: &Value) -> Result<Vec<u8>, jcs::JcsError> {
    match envelope {
        Value::Object(map) => {
            let mut copy = map.clone();
            copy.shift_remove("sig");
            copy.shift_remove("signature");
            jcs::canonical_bytes(&Value::Object(copy))
        }
        other => jcs::canonical_bytes(other),
    }
}

/// Standard padded base64 of the compact JSON text (JSON.stringify of the envelope).
pub fn encode_json_header(value: &Value) -> Result<String, jcs::JcsError> {
    Ok(b64::b64_encode(jcs::js_stringify(value)?.as_bytes()))
}

/// Decodes a header value to JSON: padded base64 of UTF-8 JSON.
pub fn decode_json_header(value: &str) -> Option<Value> {
    let bytes = b64::b64_decode(value.trim())?;
    let text = std::str::from_utf8(&bytes).ok()?;
    serde_json::from_str(text).ok()
}
