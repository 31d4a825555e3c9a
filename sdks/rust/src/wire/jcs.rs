//! RFC 8785 JSON Canonicalization Scheme (JCS): members sorted by UTF-16 code units, numbers in ECMAScript
//! form, no insignificant whitespace, only the mandatory escapes. `sdks/vectors/jcs.json` proves it byte for byte.

use serde_json::{Map, Number, Value};
use std::fmt::Write;

/// A value JSON (or JCS) cannot represent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JcsError(pub String);

impl std::fmt::Display for JcsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for JcsError {}

/// The ECMAScript Number::toString form of a double (RFC 8785 section 3.2.2.3).
pub fn es_number(value: f64) -> Result<String, JcsError> {
    if !value.is_finite() {
        return Err(JcsError("NaN and Infinity have no JSON form".into()));
    }
    if value == 0.0 {
        return Ok("0".into());
    }
    let sign = if value < 0.0 { "-" } else { "" };
    // `{:e}` prints the shortest digits that round-trip: exactly the digits ECMAScript asks for.
    let sci = format!("{:e}", value.abs());
    let (mantissa, exp) = sci.split_once('e').expect("scientific form");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().expect("exponent") + 1;
    let text = if k <= n && n <= 21 {
        format!("{}{}", digits, "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{}", "0".repeat((-n) as usize), digits)
    } else {
        let e = n - 1;
        let m = if k == 1 { digits.to_string() } else { format!("{}.{}", &digits[..1], &digits[1..]) };
        format!("{}e{}{}", m, if e >= 0 { "+" } else { "-" }, e.abs())
    };
    Ok(format!("{sign}{text}"))
}

/// A JSON number as a double, the way every engine reads it.
pub fn number_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

pub fn number_text(n: &Number) -> Result<String, JcsError> {
    es_number(number_f64(n))
}

/// A JSON string literal with JSON.stringify's escapes (the mandatory ones, lowercase hex).
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn utf16_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

fn write_canonical(out: &mut String, value: &Value) -> Result<(), JcsError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)?),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(out, item)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| utf16_cmp(a.0, b.0));
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_canonical(out, v)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// The JCS text of a JSON value.
pub fn canonical_string(value: &Value) -> Result<String, JcsError> {
    let mut out = String::new();
    write_canonical(&mut out, value)?;
    Ok(out)
}

/// The UTF-8 bytes of the JCS text: exactly what gets hashed and signed.
pub fn canonical_bytes(value: &Value) -> Result<Vec<u8>, JcsError> {
    canonical_string(value).map(String::into_bytes)
}

fn write_compact(out: &mut String, value: &Value) -> Result<(), JcsError> {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(out, item)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            // ECMAScript property order: array-index keys ascending first, then the others as inserted.
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            let index_of = |k: &str| -> Option<u32> {
                let n: u32 = k.parse().ok()?;
                (n != u32::MAX && n.to_string() == k).then_some(n)
            };
            if members.iter().any(|(k, _)| index_of(k).is_some()) {
                members.sort_by_key(|(k, _)| index_of(k).map_or((1, 0), |n| (0, n)));
            }
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_compact(out, v)?;
            }
            out.push('}');
        }
        other => write_canonical(out, other)?,
    }
    Ok(())
}

/// JSON.stringify(value): members in insertion order, ECMAScript numbers (the header encodings).
pub fn js_stringify(value: &Value) -> Result<String, JcsError> {
    let mut out = String::new();
    write_compact(&mut out, value)?;
    Ok(out)
}

/// Parses JSON text (UTF-8 bytes); the error says why it is not JSON.
pub fn parse_json_bytes(data: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("invalid UTF-8: {e}"))?;
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// Convenience for building objects in insertion order.
pub fn object(members: Vec<(&str, Value)>) -> Value {
    let mut map = Map::new();
    for (k, v) in members {
        map.insert(k.to_string(), v);
    }
    Value::Object(map)
}
