//! JSON value predicates with the meaning the wire contract gives them (numbers are IEEE 754 doubles).

use crate::wire::jcs::{es_number, number_f64};
use serde_json::Value;

pub const MAX_SAFE_INTEGER: f64 = 9007199254740991.0;

pub fn num(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Number(n)) => Some(number_f64(n)),
        _ => None,
    }
}

/// A number as JavaScript's JSON.stringify writes it: an integral value as an integer (3, not 3.0), so the
/// engine's JSON answers match the TypeScript engine's for the same receipts.
pub fn js_number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

pub fn is_number(v: Option<&Value>) -> bool {
    num(v).is_some()
}

pub fn is_safe_integer(v: Option<&Value>) -> bool {
    matches!(num(v), Some(x) if x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER)
}

pub fn is_count(v: Option<&Value>) -> bool {
    is_safe_integer(v) && num(v).unwrap_or(-1.0) >= 0.0
}

pub fn is_str(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(_)))
}

pub fn non_empty(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(s)) if !s.is_empty())
}

pub fn str_of(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
}

pub fn fnum(x: f64) -> String {
    es_number(x).unwrap_or_else(|_| if x.is_nan() { "NaN".into() } else if x > 0.0 { "Infinity".into() } else { "-Infinity".into() })
}

/// How a JSON value reads in a message (String(value)): absent is "undefined".
pub fn js_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => fnum(number_f64(n)),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| if i.is_null() { String::new() } else { js_string(Some(i)) })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}
