//! tokenise_request: the field walk, tool-call arguments, stream options, the JCS bytes, bad bodies.
//! Mirrors test/sdks/typescript/tokeniser/tokeniseRequest.test.ts and sdks/python/tests/test_tokenise_tool_calls.py.
use privacy_relay::tokeniser::request::*;
use privacy_relay::tokeniser::session::*;
use privacy_relay::wire::jcs::{canonical_string, js_stringify};
use serde_json::{json, Value};

const EMAIL: &str = "jane.doe@example.com";
const PHONE: &str = "+44 20 7946 0958";

fn off() -> SessionOptions {
    SessionOptions { names: NameModel::Off, ..Default::default() }
}

fn alias_of(out: &TokenisedRequest, value: &str) -> String {
    out.map.iter().find(|(_, o)| o == value).map(|(a, _)| a.clone()).unwrap()
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

#[test]
fn openai_tool_call_arguments_are_tokenised_and_unchanged_arguments_keep_their_bytes() {
    let args = "{\n  \"to\": \"jane.doe@example.com\",\n  \"call\": {\n    \"numbers\": [\n      \"+44 20 7946 0958\",\n      7\n    ],\n    \"urgent\": true\n  }\n}";
    let untouched = "{ \"city\": \"Paris\",  \"days\": 3 }";
    let body = json!({
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "user", "content": format!("Mail {EMAIL}")},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "send", "arguments": args}},
                {"id": "c2", "type": "function", "function": {"name": "weather", "arguments": untouched}},
                {"id": "c3", "type": "function", "function": {"name": "raw", "arguments": format!("not json {EMAIL}")}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": format!("sent to {EMAIL}")},
            {"role": "assistant", "content": null, "function_call": {"name": "legacy", "arguments": js_stringify(&json!({"phone": PHONE})).unwrap()}}
        ]
    });
    let out = tokenise_request(Route::ChatCompletions, &body, off()).unwrap();
    let wire = String::from_utf8(out.body_bytes.clone()).unwrap();
    assert!(!wire.contains(EMAIL) && !wire.contains("7946"));
    let (email, phone) = (alias_of(&out, EMAIL), alias_of(&out, PHONE));
    let sent = &out.body;
    assert_eq!(sent["messages"][0]["content"], format!("Mail {email}"));
    let calls = &sent["messages"][1]["tool_calls"];
    assert_eq!(parse(calls[0]["function"]["arguments"].as_str().unwrap()), json!({"to": email, "call": {"numbers": [phone, 7], "urgent": true}}));
    assert_eq!(calls[0]["function"]["arguments"].as_str().unwrap(), js_stringify(&json!({"to": email, "call": {"numbers": [phone, 7], "urgent": true}})).unwrap());
    assert_eq!(calls[1]["function"]["arguments"], untouched);
    assert_eq!(calls[2]["function"]["arguments"], format!("not json {email}"));
    assert_eq!(sent["messages"][2]["content"], format!("sent to {email}"));
    assert_eq!(parse(sent["messages"][3]["function_call"]["arguments"].as_str().unwrap()), json!({"phone": phone}));
    assert_eq!(Value::Object(out.detectors_fired.clone()), json!({"EMAIL": 4, "PHONE": 2}));
    assert_eq!(wire, canonical_string(&out.body).unwrap());
    // The caller's body is untouched.
    assert!(body["messages"][1]["tool_calls"][0]["function"]["arguments"].as_str().unwrap().contains(EMAIL));
}

#[test]
fn anthropic_system_tool_use_and_tool_result_share_aliases() {
    let body = json!({
        "model": "claude", "max_tokens": 10,
        "system": [{"type": "text", "text": format!("Operator {EMAIL}")}],
        "messages": [
            {"role": "user", "content": format!("Mail {EMAIL}")},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": EMAIL, "n": 2}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": format!("Phone {PHONE}")}]}]}
        ]
    });
    let out = tokenise_request(Route::Messages, &body, off()).unwrap();
    let email = alias_of(&out, EMAIL);
    assert_eq!(out.body["system"][0]["text"], format!("Operator {email}"));
    assert_eq!(out.body["messages"][0]["content"], format!("Mail {email}"));
    assert_eq!(out.body["messages"][1]["content"][0], json!({"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": email, "n": 2}}));
    assert!(!String::from_utf8(out.body_bytes).unwrap().contains("7946"));
}

#[test]
fn embeddings_strings_and_token_arrays() {
    let out = tokenise_request(Route::Embeddings, &json!({"model": "e", "input": [EMAIL, [1, 2, 3], "plain"]}), off()).unwrap();
    assert_eq!(out.body["input"][1], json!([1, 2, 3]));
    assert_eq!(out.body["input"][2], "plain");
    assert!(out.body["input"][0].as_str().unwrap().starts_with("<EMAIL_1_"));
    let one = tokenise_request(Route::Embeddings, &json!({"model": "e", "input": format!("x {EMAIL}")}), off()).unwrap();
    assert!(one.body["input"].as_str().unwrap().starts_with("x <EMAIL_1_"));
}

#[test]
fn a_streamed_chat_asks_for_usage_and_keeps_other_stream_options() {
    let out = tokenise_request(
        Route::ChatCompletions,
        &json!({"model": "m", "stream": true, "stream_options": {"x": 1}, "messages": [{"role": "user", "content": "hi"}]}),
        off(),
    )
    .unwrap();
    assert_eq!(out.body["stream_options"], json!({"x": 1, "include_usage": true}));
    let plain = tokenise_request(Route::ChatCompletions, &json!({"model": "m", "messages": []}), off()).unwrap();
    assert!(plain.body.get("stream_options").is_none());
}

#[test]
fn a_literal_alias_typed_by_the_user_never_collides_with_a_minted_one() {
    let secret = vec![7u8; 32];
    let opts = || SessionOptions { names: NameModel::Off, secret: Some(secret.clone()), ..Default::default() };
    let first = tokenise_request(Route::ChatCompletions, &json!({"model": "m", "messages": [{"role": "user", "content": EMAIL}]}), opts()).unwrap();
    let minted = first.map[0].0.clone();
    let second = tokenise_request(
        Route::ChatCompletions,
        &json!({"model": "m", "messages": [{"role": "user", "content": format!("{minted} and {EMAIL}")}]}),
        opts(),
    )
    .unwrap();
    assert_ne!(second.map[0].0, minted);
    assert!(second.body["messages"][0]["content"].as_str().unwrap().starts_with(&format!("{minted} and <EMAIL_1_")));
}

#[test]
fn bad_bodies_are_invalid_request_errors() {
    let e = tokenise_request(Route::ChatCompletions, &json!([1]), off()).unwrap_err();
    assert_eq!(e, TokeniseError::InvalidRequestBody("request body must be a JSON object".into()));
    let e = tokenise_request(Route::ChatCompletions, &json!({"messages": "x"}), off()).unwrap_err();
    assert_eq!(e.message(), "messages must be an array");
    assert_eq!(e.code(), "invalid_request");
}

#[test]
fn names_on_finds_gazetteer_names_and_titles() {
    let out = tokenise_request(
        Route::ChatCompletions,
        &json!({"model": "m", "messages": [{"role": "user", "content": "Dear Anna,\nplease call Herr Oberhuber about Maria Garcia's invoice."}]}),
        SessionOptions::default(),
    )
    .unwrap();
    let values: Vec<&str> = out.map.iter().map(|(_, v)| v.as_str()).collect();
    assert!(values.contains(&"Anna"), "{values:?}");
    assert!(values.contains(&"Oberhuber"), "{values:?}");
    assert!(values.contains(&"Maria Garcia"), "{values:?}");
}
