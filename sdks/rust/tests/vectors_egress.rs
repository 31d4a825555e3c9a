//! sdks/vectors/egress-policy-cases.json: every body walked with egress-policy.json exactly as the reference
//! engine does: the same refusals at the same JSON pointers, or the same bytes, passthrough, counts and map.
mod common;
use common::{load, s};
use privacy_relay::tokeniser::egress::{egress_routes, MAX_EGRESS_DEPTH};
use privacy_relay::tokeniser::request::{tokenise_request, Route, TokeniseError};
use privacy_relay::tokeniser::session::{MediaPolicy, NameModel, SessionOptions};
use privacy_relay::wire::hashing::unhex;
use serde_json::{json, Value};

#[test]
fn every_egress_policy_case() {
    let v = load("egress-policy-cases");
    assert_eq!(v["max_depth"].as_u64().unwrap() as usize, MAX_EGRESS_DEPTH);
    let cases = v["cases"].as_array().unwrap();
    let routes: std::collections::BTreeSet<&str> = cases.iter().map(|c| s(c, "route")).collect();
    assert_eq!(routes.into_iter().map(str::to_string).collect::<Vec<_>>(), egress_routes());
    let mut failures = Vec::new();
    for case in cases {
        let o = &case["options"];
        assert_eq!(s(o, "names"), "off");
        let options = SessionOptions {
            names: NameModel::Off,
            secret: unhex(s(o, "secret_hex")),
            identifier_secret: unhex(s(o, "identifier_secret_hex")),
            media_policy: MediaPolicy::parse(s(o, "media_policy")).unwrap(),
            passthrough_paths: o["passthrough_paths"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect(),
            ..Default::default()
        };
        let route = Route::parse(s(case, "route")).unwrap();
        let got = tokenise_request(route, &case["body"], options);
        let expected = &case["expected"];
        let answer = match &got {
            Err(TokeniseError::Egress(r)) => {
                let mut refusal = json!({"code": r.code, "path": r.path});
                if let Some(k) = &r.kind {
                    refusal["kind"] = json!(k);
                }
                assert_eq!(r.details()["path"], json!(r.path));
                json!({ "refusal": refusal })
            }
            Err(e) => json!({"error": e.to_string()}),
            Ok(t) => {
                let text = String::from_utf8(t.body_bytes.clone()).unwrap();
                for never in case.get("never_sent").and_then(Value::as_array).into_iter().flatten() {
                    assert!(!text.contains(never.as_str().unwrap()), "{}: {never} was sent", s(case, "name"));
                }
                json!({
                    "body_jcs": text,
                    "passthrough": t.passthrough.iter().map(|(p, k)| json!({"path": p, "kind": k})).collect::<Vec<_>>(),
                    "detectors_fired": t.detectors_fired,
                    "map": t.map.iter().map(|(a, o)| json!([a, o])).collect::<Vec<_>>(),
                })
            }
        };
        if &answer != expected {
            failures.push(format!("{}\n  got  {answer}\n  want {expected}", s(case, "name")));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
