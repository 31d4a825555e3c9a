//! sdks/vectors aliases.json, tokeniser-spans.json and tokeniser-names.json: tags, tokenisation outputs and maps,
//! streaming detokenisation chunk by chunk, and the spans of the multilingual sets (names off, and the built-in name
//! model on), exactly; name-model.json is the data the built-in name model is built from.
mod common;
use common::{load, s};
use privacy_relay::tokeniser::session::*;
use privacy_relay::tokeniser::text::Utf16Index;
use privacy_relay::tokeniser::*;
use privacy_relay::wire::hashing::{hex, unhex};
use serde_json::{json, Value};

fn secret(v: &Value, k: &str) -> Vec<u8> {
    unhex(s(v, k)).unwrap()
}

fn map_json(map: &[(String, String)]) -> Value {
    Value::Array(map.iter().map(|(a, o)| json!([a, o])).collect())
}

#[test]
fn pattern_and_alphabet_are_the_vector_ones() {
    let a = load("aliases");
    assert_eq!(ALIAS_PATTERN, s(&a, "pattern"));
    assert_eq!(TAG_ALPHABET, s(&a, "tag_alphabet"));
    assert_eq!(REQUEST_TAG_LENGTH as u64, a["request_tag_length"].as_u64().unwrap());
    assert_eq!(STABLE_TAG_LENGTH as u64, a["stable_tag_length"].as_u64().unwrap());
    for case in a["is_alias"].as_array().unwrap() {
        assert_eq!(is_alias(s(case, "text")), case["alias"].as_bool().unwrap(), "{}", s(case, "text"));
    }
}

#[test]
fn tag_derivation_per_request_and_stable() {
    use hmac::{Hmac, Mac};
    let a = load("aliases");
    let mac = |key: &[u8], m: &str| {
        let mut h = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
        h.update(m.as_bytes());
        h.finalize().into_bytes().to_vec()
    };
    for t in a["tags"]["per_request"].as_array().unwrap() {
        let m = mac(&secret(&a, "request_secret_hex"), s(t, "message"));
        assert_eq!(hex(&m), s(t, "hmac_sha256"));
        assert_eq!(tag_from_mac(&m, REQUEST_TAG_LENGTH), s(t, "tag"));
    }
    for t in a["tags"]["stable"].as_array().unwrap() {
        let m = mac(&secret(&a, "stable_secret_hex"), s(t, "message"));
        assert_eq!(hex(&m), s(t, "hmac_sha256"));
        assert_eq!(tag_from_mac(&m, STABLE_TAG_LENGTH), s(t, "tag"));
        let mut session = TokeniserSession::new(SessionOptions { stable_alias_secret: Some(secret(&a, "stable_secret_hex")), ..Default::default() });
        assert_eq!(session.alias_for(EntityType::parse(s(t, "type")).unwrap(), s(t, "value")), s(t, "alias"));
    }
}

#[test]
fn tokenise_with_names_off() {
    let a = load("aliases");
    for case in a["tokenise"].as_array().unwrap() {
        let mut session = TokeniserSession::new(SessionOptions { names: NameModel::Off, secret: Some(secret(&a, "request_secret_hex")), ..Default::default() });
        assert_eq!(tokenise_text(s(case, "text"), &mut session), s(case, "output"));
        assert_eq!(map_json(session.map()), case["map"]);
        assert_eq!(Value::Object(session.detectors_fired().clone()), case["detectors_fired"]);
    }
}

#[test]
fn tokenise_with_stable_aliases() {
    let a = load("aliases");
    for case in a["tokenise_stable"].as_array().unwrap() {
        let mut session = TokeniserSession::new(SessionOptions {
            names: NameModel::Off,
            secret: Some(secret(&a, "request_secret_hex")),
            stable_alias_secret: Some(secret(&a, "stable_secret_hex")),
            ..Default::default()
        });
        assert_eq!(tokenise_text(s(case, "text"), &mut session), s(case, "output"));
        assert_eq!(map_json(session.map()), case["map"]);
    }
}

#[test]
fn streaming_detokeniser_push_by_push() {
    let a = load("aliases");
    for case in a["streams"].as_array().unwrap() {
        let pairs: Vec<(String, String)> = case["map"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
            .collect();
        let mut stream = StreamingDetokeniser::new(pairs.clone());
        let outputs: Vec<String> = case["chunks"].as_array().unwrap().iter().map(|c| stream.push(c.as_str().unwrap())).collect();
        assert_eq!(json!(outputs), case["outputs"], "{}", s(case, "name"));
        assert_eq!(stream.flush(), s(case, "flush"));
        let joined: String = case["chunks"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let map: std::collections::HashMap<String, String> = pairs.into_iter().collect();
        assert_eq!(detokenise(&joined, |a| map.get(a).cloned()), s(case, "joined"));
    }
}

/// Every case of a span vector set against `detect_spans` with the set's phone regions and `names`: all mismatches at once.
fn assert_spans_match(v: &Value, names: NameModel) {
    let regions: Vec<String> = v["engine_settings"]["phone_regions"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
    let options = SessionOptions { names, phone_regions: Some(regions), ..Default::default() };
    let mut failures = Vec::new();
    for case in v["cases"].as_array().unwrap() {
        let text = s(case, "text");
        let index = Utf16Index::new(text);
        let found: Vec<Value> = detect_spans(text, &options)
            .iter()
            .map(|sp| json!({"start": index.at(sp.start), "end": index.at(sp.end), "type": sp.ty.as_str(), "value": &text[sp.start..sp.end]}))
            .collect();
        if Value::Array(found.clone()) != case["spans"] {
            failures.push(format!("{text}\n  got {}\n  want {}", Value::Array(found), case["spans"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn spans_of_the_multilingual_set() {
    assert_spans_match(&load("tokeniser-spans"), NameModel::Off);
}

#[test]
fn spans_with_the_builtin_name_model() {
    let v = load("tokeniser-names");
    assert_eq!(s(&v["engine_settings"], "names"), "builtin");
    assert_spans_match(&v, NameModel::Builtin);
}

#[test]
fn the_name_model_the_engine_embeds_is_the_vectors_one_byte_for_byte() {
    let embedded = std::fs::read(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../python/src/privacy_relay/tokeniser/data/name-model.json")).unwrap();
    let vectors = std::fs::read(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../vectors/name-model.json")).unwrap();
    assert!(embedded == vectors, "run: node_modules/.bin/node sdks/python/tools/generate-data.ts");
    assert_eq!(load("name-model")["version"], 1);
    let [given, surnames, _, _] = privacy_relay::tokeniser::names::gazetteer_sizes();
    assert!(given > 13_000 && surnames > 11_000, "given {given}, surnames {surnames}");
}

/// tokeniser-large.json: millions of repeats of a short unit, then a real value. PCRE2's match limit on such a run
/// used to end the detector's search as "no match", so the value after it was sent in the clear.
#[test]
fn spans_after_pathological_long_runs() {
    let v = load("tokeniser-large");
    let regions: Vec<String> = v["engine_settings"]["phone_regions"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
    let options = SessionOptions { names: NameModel::Off, phone_regions: Some(regions), ..Default::default() };
    for case in v["cases"].as_array().unwrap() {
        let text = s(case, "unit").repeat(case["times"].as_u64().unwrap() as usize) + s(case, "tail");
        let found: Vec<Value> = detect_spans(&text, &options)
            .iter()
            .map(|sp| json!({"start": sp.start, "end": sp.end, "type": sp.ty.as_str(), "value": &text[sp.start..sp.end]}))
            .collect();
        assert_eq!(Value::Array(found), case["spans"], "{}", s(case, "name"));
    }
}
