//! Strict base64 codecs: values not in canonical form are rejected, never "repaired".

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;

/// base64url without padding (signatures, JWK coordinates, key ids).
pub fn b64url_encode(data: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(data)
}

/// Strict base64url: no padding, no foreign characters, zero trailing bits.
pub fn b64url_decode(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 == 1 || !text.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
        return None;
    }
    let data = URL_SAFE_NO_PAD.decode(text).ok()?;
    (b64url_encode(&data) == text).then_some(data)
}

/// Standard alphabet, padded (the receipt and attestation headers).
pub fn b64_encode(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// Strict standard padded base64.
pub fn b64_decode(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 != 0 {
        return None;
    }
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 || !body.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/') {
        return None;
    }
    let data = STANDARD.decode(text).ok()?;
    (b64_encode(&data) == text).then_some(data)
}
