//! Bad input the engine must survive: long prompts in bounded, linear time; adversarial runs; alias-looking
//! text; empty and odd bodies. The timing tests run in release builds only (ci.sh runs cargo test --release).
use privacy_relay::tokeniser::request::{tokenise_request, Route};
use privacy_relay::tokeniser::session::{NameModel, SessionOptions, TokeniserSession};
use privacy_relay::tokeniser::{detokenise, tokenise_text, StreamingDetokeniser};
use serde_json::json;
use std::time::Instant;

fn time_tokenise(text: &str) -> (f64, usize) {
    let t = Instant::now();
    let mut s = TokeniserSession::new(SessionOptions::default());
    let out = tokenise_text(text, &mut s);
    assert!(!out.is_empty() || text.is_empty());
    (t.elapsed().as_secs_f64(), s.map().len())
}

fn scaled(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len() + 1)[..bytes].to_string()
}

#[test]
#[cfg_attr(debug_assertions, ignore = "timing: run with --release")]
fn a_10_mb_prompt_is_tokenised_in_bounded_linear_time() {
    let unit = "Call Maria Garcia at +44 20 7946 0958 or mail maria@example.com about card 4111 1111 1111 1111 today.\n";
    let (one, _) = time_tokenise(&scaled(unit, 1_000_000));
    let (ten, aliases) = time_tokenise(&scaled(unit, 10_000_000));
    assert!(aliases >= 4, "the values are still found: {aliases}");
    assert!(ten < 30.0, "10 MB took {ten:.1} s");
    assert!(ten < one * 20.0 + 1.0, "not linear: 1 MB {one:.2} s, 10 MB {ten:.2} s");
}

#[test]
#[cfg_attr(debug_assertions, ignore = "timing: run with --release")]
fn adversarial_runs_stay_linear() {
    let cases = ["a", "7", "1.", "12 ", "<", "Anna ", "name,phone\nAnna,0612345678\n", "x@", "+1 ", "(", "DE89 "];
    for unit in cases {
        let (small, _) = time_tokenise(&scaled(unit, 100_000));
        let (large, _) = time_tokenise(&scaled(unit, 400_000));
        assert!(large < small * 10.0 + 0.5, "{unit:?}: 100 KB {small:.3} s, 400 KB {large:.3} s");
    }
}

#[test]
fn alias_shaped_text_and_unknown_aliases_pass_through() {
    let map = vec![("<EMAIL_1_ynha>".to_string(), "a@b.example".to_string())];
    let lookup = |a: &str| map.iter().find(|(k, _)| k == a).map(|(_, v)| v.clone());
    assert_eq!(detokenise("<EMAIL_2_ynha> <EMAIL_1> <EMAIL_1_ynha>", lookup), "<EMAIL_2_ynha> <EMAIL_1> a@b.example");
    let mut stream = StreamingDetokeniser::new(map.clone());
    let mut shown = String::new();
    for chunk in ["<", "<<EMAIL_1", "_ynh", "a>", "<EM", "AIL_9_zzzz>", "<"] {
        shown.push_str(&stream.push(chunk));
    }
    shown.push_str(&stream.flush());
    assert_eq!(shown, "<<a@b.example<EMAIL_9_zzzz><");
}

#[test]
fn empty_and_odd_bodies() {
    let off = || SessionOptions { names: NameModel::Off, ..Default::default() };
    // The egress policy refuses what it does not name; null carries nothing and passes.
    let e = tokenise_request(Route::ChatCompletions, &json!({"messages": [null, 3, "x"]}), off()).unwrap_err();
    assert_eq!((e.code(), e.message().contains("/messages/1")), ("unsupported_field", true));
    let r = tokenise_request(Route::ChatCompletions, &json!({"messages": [null, {"role": "user", "content": null}]}), off()).unwrap();
    assert!(r.map.is_empty());
    let e = tokenise_request(Route::ChatCompletions, &json!({"messages": [{"role": "user", "content": [{"type": "text"}, 1]}]}), off()).unwrap_err();
    assert!(e.message().contains("/messages/0/content/1"), "{e}");
    let r = tokenise_request(Route::Embeddings, &json!({}), off()).unwrap();
    assert_eq!(String::from_utf8(r.body_bytes).unwrap(), "{}");
    let r = tokenise_request(Route::Messages, &json!({"system": "Mail a@b.example", "messages": []}), off()).unwrap();
    assert!(r.body["system"].as_str().unwrap().starts_with("Mail <EMAIL_1_"));
    let mut s = TokeniserSession::new(off());
    assert_eq!(tokenise_text("", &mut s), "");
    assert_eq!(tokenise_text("\u{0}\u{FFFF}😀 é", &mut s), "\u{0}\u{FFFF}😀 é");
}

#[test]
fn a_pattern_that_hits_its_resource_limit_is_counted() {
    use privacy_relay::tokeniser::jsre::{compile, limit_failures};
    // Nested quantifiers on a near miss: PCRE2 stops at its match limit instead of answering.
    let re = compile(r"^(a+)+$", "");
    let before = limit_failures();
    assert!(re.is_match(&format!("{}!", "a".repeat(64))).is_err());
    assert_eq!(limit_failures(), before + 1);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "12 MB inputs: run with --release")]
fn a_request_whose_text_could_not_be_fully_scanned_is_refused_and_nothing_is_returned_to_send() {
    // 12 MB of "http://a/" makes a URL pattern hit PCRE2's limit: refused with invalid_request, not sent half-scanned.
    let content = format!("{} mail me@example.com", "http://a/".repeat(12_000_000 / 9));
    let body = json!({"model": "m", "messages": [{"role": "user", "content": content}]});
    let e = tokenise_request(Route::ChatCompletions, &body, SessionOptions { names: NameModel::Off, ..Default::default() }).unwrap_err();
    assert_eq!(e.code(), "invalid_request");
    assert!(e.message().contains("could not be fully scanned"), "{e}");
}
