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

#[test]
fn chain_cases() {
    let r = load("receipts");
    let jwks = Jwks::new(&r["jwks"]).unwrap();
    for case in r["chains"].as_array().unwrap() {
        let result = verify_chain(case["receipts"].as_array().unwrap(), &jwks, case["now_seconds"].as_f64().unwrap()).unwrap();
        let expected = &case["expected"];
        assert_eq!(result.valid, expected["valid"].as_bool().unwrap(), "{}", s(case, "name"));
        assert_eq!(result.verified as u64, expected["verified"].as_u64().unwrap(), "{}", s(case, "name"));
        match &result.break_ {
            None => assert!(expected["break"].is_null(), "{}", s(case, "name")),
            Some(b) => {
                let e = &expected["break"];
                assert_eq!(b.index as u64, e["index"].as_u64().unwrap());
                assert_eq!(b.seq, e["seq"].as_f64());
                assert_eq!(b.reason, s(e, "reason"), "{}", s(case, "name"));
            }
        }
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
