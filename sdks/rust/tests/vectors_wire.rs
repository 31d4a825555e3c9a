//! sdks/vectors jcs.json, sha256.json, attestation.json (build and offline verify): byte for byte.
mod common;
use common::{load, s};
use privacy_relay::attestation::*;
use privacy_relay::verify::{verify_receipt, Jwks};
use privacy_relay::wire::ecdsa::{jwk_thumbprint, SigningKey};
use privacy_relay::wire::hashing::*;
use privacy_relay::wire::jcs::{canonical_string, js_stringify};
use privacy_relay::wire::signing_input;
use serde_json::{json, Value};

#[test]
fn jcs_canonical_form_is_the_vector_byte_for_byte() {
    let v = load("jcs");
    for case in v["cases"].as_array().unwrap() {
        let parsed: Value = serde_json::from_str(s(case, "input")).unwrap();
        assert_eq!(canonical_string(&parsed).unwrap(), s(case, "canonical"), "{}", s(case, "name"));
    }
}

#[test]
fn jcs_refuses_non_finite_numbers() {
    assert!(privacy_relay::wire::jcs::es_number(f64::NAN).is_err());
    assert!(privacy_relay::wire::jcs::es_number(f64::INFINITY).is_err());
    assert_eq!(privacy_relay::wire::jcs::es_number(-0.0).unwrap(), "0");
    assert_eq!(privacy_relay::wire::jcs::es_number(1e21).unwrap(), "1e+21");
    assert_eq!(privacy_relay::wire::jcs::es_number(123e-20).unwrap(), "1.23e-18");
}

#[test]
fn sha256_of_text_bodies_and_merkle_nodes() {
    let v = load("sha256");
    for case in v["text"].as_array().unwrap() {
        assert_eq!(hex(s(case, "text").as_bytes()), s(case, "utf8_hex"));
        assert_eq!(sha256_hex(s(case, "text").as_bytes()), s(case, "sha256"));
    }
    for case in v["json_body"].as_array().unwrap() {
        assert_eq!(json_body_sha256_hex(s(case, "body").as_bytes()).unwrap(), s(case, "sha256"), "{}", s(case, "name"));
    }
    let m = &v["merkle"];
    assert_eq!(hex(&empty_tree_root()), s(m, "empty_tree_root"));
    for leaf in m["leaf"].as_array().unwrap() {
        assert_eq!(hex(&merkle_leaf_hash(&unhex(s(leaf, "data_hex")).unwrap())), s(leaf, "leaf_hash"));
    }
    for node in m["node"].as_array().unwrap() {
        let h = merkle_node_hash(&unhex(s(node, "left_hex")).unwrap(), &unhex(s(node, "right_hex")).unwrap());
        assert_eq!(hex(&h), s(node, "node_hash"));
    }
}

#[test]
fn fixed_device_key_derives_the_vector_jwk_and_kid() {
    let a = load("attestation");
    let device = &a["device_key"];
    let key = SigningKey::from_private_jwk(&device["private_jwk"]).unwrap();
    assert_eq!(hex(&key.d_bytes()), s(device, "d_hex"));
    assert_eq!(key.public_jwk(), device["public_jwk"]);
    assert_eq!(js_stringify(&key.private_jwk()).unwrap(), js_stringify(&device["private_jwk"]).unwrap());
    assert_eq!(jwk_thumbprint(&device["public_jwk"]).unwrap(), s(device, "kid"));
    assert_eq!(key.kid(), s(device, "kid"));
    let derived = SigningKey::from_bytes(&sha256(b"privacy-relay test vectors: device attestation key")).unwrap();
    assert_eq!(hex(&derived.d_bytes()), s(device, "d_hex"));
}

#[test]
fn attestation_build_reproduces_envelope_signature_and_header() {
    let a = load("attestation");
    let key = SigningKey::from_private_jwk(&a["device_key"]["private_jwk"]).unwrap();
    for case in a["build"].as_array().unwrap() {
        let i = &case["input"];
        for canonical in [false, true] {
            let body = if canonical {
                canonical_string(&serde_json::from_str::<Value>(s(i, "body")).unwrap()).unwrap()
            } else {
                s(i, "body").to_string()
            };
            let input = AttestationInput {
                route: s(i, "route"),
                body_bytes: body.as_bytes(),
                body_is_canonical: canonical,
                detectors_fired: i["detectors_fired"].as_object().unwrap().clone(),
                engine: EngineIdentity {
                    id: s(&i["engine"], "id").into(),
                    version: s(&i["engine"], "version").into(),
                    sha256: s(&i["engine"], "sha256").into(),
                },
                trust_tier: Some(s(i, "trust_tier")),
                jti: Some(s(i, "jti").into()),
                iat: i["iat"].as_i64(),
                passthrough: None,
                deterministic: true,
            };
            let envelope = build_attestation(&input, &key).unwrap();
            assert_eq!(s(&envelope["claims"]["v3-attestation"], "egress_sha256"), s(case, "egress_sha256"));
            assert_eq!(String::from_utf8(signing_input(&envelope).unwrap()).unwrap(), s(case, "signing_input"));
            assert_eq!(js_stringify(&envelope).unwrap(), js_stringify(&case["envelope"]).unwrap(), "{}", s(case, "name"));
            assert_eq!(encode_attestation_header(&envelope).unwrap(), s(case, "header"));
        }
    }
}

#[test]
fn randomised_signatures_differ_but_verify() {
    let a = load("attestation");
    let key = SigningKey::from_private_jwk(&a["device_key"]["private_jwk"]).unwrap();
    assert_ne!(key.sign(b"x"), key.sign(b"x"));
    assert_eq!(key.sign_deterministic(b"x"), key.sign_deterministic(b"x"));
    let vk = privacy_relay::wire::ecdsa::public_key_from_jwk(&key.public_jwk()).unwrap();
    assert!(privacy_relay::wire::ecdsa::verify_raw(&vk, &key.sign(b"x"), b"x"));
}

#[test]
fn attestation_offline_verdicts() {
    let a = load("attestation");
    let none = Jwks::new(&json!({"keys": []})).unwrap();
    for case in a["verify"].as_array().unwrap() {
        let r = verify_receipt(&case["header"], &none, case["now_seconds"].as_f64().unwrap(), None, None).unwrap();
        let got = json!({"valid": r.valid, "reason": r.reason});
        assert_eq!(got, case["expected"]["offline"], "{}", s(case, "name"));
    }
}

#[test]
fn every_vector_file_is_read() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok()?.strip_suffix(".json").map(str::to_string))
        .collect();
    found.sort();
    assert_eq!(found, common::VECTOR_FILES.to_vec(), "a vector file without a test here");
}
