//! The engine end to end on the device, without a gateway: tokenise a chat request under the egress policy, sign its
//! v3 attestation, restore a streamed answer chunk by chunk, verify a receipt and a webhook offline.
//! Run: cargo run --release --example quickstart   (ci.sh runs it)
use privacy_relay::attestation::{build_attestation, encode_attestation_header, AttestationInput};
use privacy_relay::tokeniser::request::{tokenise_request, Route};
use privacy_relay::tokeniser::session::SessionOptions;
use privacy_relay::tokeniser::StreamingDetokeniser;
use privacy_relay::verify::webhook::{sign_webhook_v1, verify_webhook};
use privacy_relay::verify::{verify_receipt, Jwks};
use privacy_relay::wire::ecdsa::SigningKey;
use serde_json::{json, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. Tokenise: the body that leaves the device carries aliases; the map stays here.
    let body = json!({
        "model": "gpt-4o-mini",
        "user": "jane.doe@example.com",
        "messages": [{"role": "user", "content": "Dear Anna, please call +44 20 7946 0958 or mail jane.doe@example.com."}]
    });
    let t = tokenise_request(Route::ChatCompletions, &body, SessionOptions::default())?;
    let sent = String::from_utf8(t.body_bytes.clone())?;
    println!("sent:      {sent}");
    assert!(!sent.contains("jane.doe@example.com") && !sent.contains("7946") && sent.contains("\"user\":\"USER_"));

    // 2. Attest the exact bytes with the device key (X-Service-Attestation).
    let key = SigningKey::generate();
    let envelope = build_attestation(
        &AttestationInput {
            route: Route::ChatCompletions.as_str(),
            body_bytes: &t.body_bytes,
            body_is_canonical: true,
            detectors_fired: t.detectors_fired.clone(),
            engine: privacy_relay::engine_identity(),
            trust_tier: None,
            jti: None,
            iat: None,
            passthrough: t.passthrough_claim(),
            deterministic: false,
        },
        &key,
    )?;
    let header = encode_attestation_header(&envelope)?;
    let verdict = verify_receipt(&Value::String(header), &Jwks::new(&json!({"keys": []}))?, privacy_relay::attestation::now_seconds() as f64, None, None)?;
    println!("attested:  {} fired {}, offline check {}", privacy_relay::engine_identity().header_value(), json!(t.detectors_fired), verdict.valid);
    assert!(verdict.valid);

    // 3. The model answers with aliases, streamed in pieces that cut them in two: restored as they arrive.
    let (phone_alias, phone) = t.map.iter().find(|(_, v)| v.starts_with('+')).cloned().ok_or("no phone")?;
    let answer = format!("I will call {phone_alias} tomorrow.");
    let mut stream = StreamingDetokeniser::new(t.map.clone());
    let mut shown = String::new();
    for piece in answer.as_bytes().chunks(5) {
        shown.push_str(&stream.push(std::str::from_utf8(piece)?));
    }
    shown.push_str(&stream.flush());
    println!("restored:  {shown}");
    assert_eq!(shown, format!("I will call {phone} tomorrow."));

    // 4. A webhook delivery checked with its secret.
    let payload = r#"{"event":"receipt.signed","timestamp":1735689600}"#;
    let headers = vec![("X-Service-Signature".to_string(), sign_webhook_v1(payload, "whsec_example", 1735689600))];
    verify_webhook(payload.as_bytes(), &headers, "whsec_example", 300.0, 1735689650.0)?;
    println!("webhook:   verified");
    Ok(())
}
