//! sdks/vectors receipts.json, transparency.json and webhooks.json: every case answers exactly `expected`.
mod common;
use common::{load, s};
use privacy_relay::verify::webhook::*;
use privacy_relay::verify::*;
use privacy_relay::wire::ecdsa::{jwk_thumbprint, SigningKey};
use privacy_relay::wire::hashing::hex;
use serde_json::{json, Value};

#[test]
fn gateway_key_and_jwks() {
    let r = load("receipts");
    let key = &r["gateway_key"];
    assert_eq!(hex(&SigningKey::from_private_jwk(&key["private_jwk"]).unwrap().d_bytes()), s(key, "d_hex"));
    assert_eq!(jwk_thumbprint(&key["public_jwk"]).unwrap(), s(key, "kid"));
}

#[test]
fn receipt_cases() {
    let r = load("receipts");
    let jwks = Jwks::new(&r["jwks"]).unwrap();
    let cases = r["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        let result = verify_receipt(
            &case["input"],
            &jwks,
            case["now_seconds"].as_f64().unwrap(),
            case.get("previous"),
            case.get("attestation"),
        )
        .unwrap();
        assert_eq!(result.to_json(), case["expected"], "{}", s(case, "name"));
    }
}

/// The members of the engine's JSON verdict (ChainVerification::to_json, what the C ABI answers) that the
/// vectors name; compared exactly, numbers included (an integral seq is written 3, as the TypeScript engine does).
fn chain_json(c: &ChainVerification, with: &[&str]) -> Value {
    let full = c.to_json();
    let mut out = serde_json::Map::new();
    for k in ["valid", "verified", "gaps"].iter().chain(with) {
        out.insert(k.to_string(), full[*k].clone());
    }
    let mut b = full["break"].clone();
    if let Some(o) = b.as_object_mut() {
        o.retain(|k, _| ["index", "seq", "kind", "reason"].contains(&k.as_str()));
    }
    out.insert("break".into(), b);
    Value::Object(out)
}

#[test]
fn chain_cases() {
    let r = load("receipts");
    let jwks = Jwks::new(&r["jwks"]).unwrap();
    for case in r["chains"].as_array().unwrap() {
        let allow = case.get("allow_gaps").and_then(Value::as_bool).unwrap_or(false);
        let result = verify_chain(case["receipts"].as_array().unwrap(), &jwks, case["now_seconds"].as_f64().unwrap(), allow).unwrap();
        let mut want = case["expected"].clone();
        if let Some(b) = want.get_mut("break").filter(|b| b.is_object()) {
            b.as_object_mut().unwrap().retain(|k, _| ["index", "seq", "kind", "reason"].contains(&k.as_str()));
        }
        assert_eq!(chain_json(&result, &[]), want, "{}", s(case, "name"));
    }
}

#[test]
fn chain_export_cases() {
    let r = load("receipts");
    let jwks = Jwks::new(&r["jwks"]).unwrap();
    for case in r["chain_exports"].as_array().unwrap() {
        let allow = case.get("allow_gaps").and_then(Value::as_bool).unwrap_or(false);
        let (valid, chains) = verify_chain_export(&case["input"], &jwks, case["now_seconds"].as_f64().unwrap(), allow).unwrap().unwrap();
        let got = json!({
            "valid": valid,
            "chains": chains.iter().map(|c| chain_json(c, &["chain_id", "count"])).collect::<Vec<_>>()
        });
        let mut want = case["expected"].clone();
        for c in want["chains"].as_array_mut().unwrap() {
            if let Some(b) = c.get_mut("break").filter(|b| b.is_object()) {
                b.as_object_mut().unwrap().retain(|k, _| ["index", "seq", "kind", "reason"].contains(&k.as_str()));
            }
        }
        assert_eq!(got, want, "{}", s(case, "name"));
    }
}

#[test]
fn transparency_cases() {
    let t = load("transparency");
    let jwks = Jwks::new(&t["jwks"]).unwrap();
    for case in t["cases"].as_array().unwrap() {
        let result = verify_inclusion_proof(&case["proof"], Some(&case["sth"]), &jwks, case.get("receipt")).unwrap();
        assert_eq!(result.to_json(), case["expected"], "{}", s(case, "name"));
    }
}

#[test]
fn transparency_consistency_cases() {
    let t = load("transparency");
    let jwks = Jwks::new(&t["jwks"]).unwrap();
    let cases = t["consistency"].as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let result = verify_consistency_proof(&case["proof"], &case["old_head"], &jwks, case.get("new_head")).unwrap();
        assert_eq!(result.to_json(), case["expected"], "{}", s(case, "name"));
    }
}

#[test]
fn a_jwks_that_is_not_one_is_an_error_not_a_verdict() {
    let e = Jwks::new(&json!({"nope": 1})).err().unwrap();
    assert_eq!(e.code, "jwks_invalid");
}

#[test]
fn webhook_signatures_reproduce_the_vector_headers() {
    let w = load("webhooks");
    let secret = s(&w, "secret");
    for case in w["sign"].as_array().unwrap() {
        assert_eq!(sign_webhook_v1(s(case, "body"), secret, case["timestamp"].as_i64().unwrap()), s(case, "v1"));
        assert_eq!(sign_webhook_v0(&case["payload"], secret).unwrap(), s(case, "v0"));
    }
    let d = &w["delivery"];
    let headers = headers_from_json(&d["headers"]);
    verify_webhook(s(d, "body").as_bytes(), &headers, secret, 300.0, d["payload"]["timestamp"].as_f64().unwrap()).unwrap();
}

#[test]
fn webhook_verify_cases() {
    let w = load("webhooks");
    for case in w["verify"].as_array().unwrap() {
        let headers = headers_from_json(&case["headers"]);
        let got = verify_webhook(
            s(case, "body").as_bytes(),
            &headers,
            s(case, "secret"),
            case["tolerance_seconds"].as_f64().unwrap(),
            case["now_seconds"].as_f64().unwrap(),
        );
        if case["expected"]["ok"].as_bool().unwrap() {
            assert!(got.is_ok(), "{}: {:?}", s(case, "name"), got);
        } else {
            assert_eq!(got.err().map(|e| e.code), case["expected"]["code"].as_str(), "{}", s(case, "name"));
        }
    }
}

#[test]
fn webhook_without_secret_or_with_non_utf8_body() {
    let w = load("webhooks");
    let d = &w["delivery"];
    let headers = headers_from_json(&d["headers"]);
    assert_eq!(verify_webhook(s(d, "body").as_bytes(), &headers, "", 300.0, 0.0).unwrap_err().code, "missing_secret");
    assert_eq!(verify_webhook(b"\xff\xfe", &headers, s(&w, "secret"), 300.0, 0.0).unwrap_err().code, "malformed_body");
}

#[test]
fn deduper_drops_a_repeat_within_the_ttl() {
    let w = load("webhooks");
    let d = &w["delivery"];
    let headers = headers_from_json(&d["headers"]);
    let id = WebhookDeduper::event_id_of(s(d, "body").as_bytes(), &headers).unwrap();
    assert_eq!(id, s(&d["payload"], "event_id"));
    assert_eq!(WebhookDeduper::event_id_of(s(d, "body").as_bytes(), &[]).unwrap(), id);
    let mut dd = WebhookDeduper::new(10.0);
    assert!(!dd.seen_at(&id, 0.0));
    assert!(dd.seen_at(&id, 1.0));
    assert!(!dd.seen_at(&id, 10.5));
    assert_eq!(dd.len(), 1);
    let _ = Value::Null;
}
