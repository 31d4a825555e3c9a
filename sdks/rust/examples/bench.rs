//! Engine speed, the figures issue 35 asks for: tokenise + attest a 2 KB prompt with 5 identifiers (names on
//! and off), structured detection of 100 KB and 1 MB, tokenisation of a 1 MB prompt (names on), streaming
//! detokenisation per chunk. The prompt and the long texts are programs/eval-pii.ts's, so the TypeScript
//! engine's figures compare. Prints JSON; with --out FILE writes it there too.
//! Run: cargo run --release --example bench [-- --out ../../bench/results/<name>.json]
use privacy_relay::attestation::{build_attestation, AttestationInput};
use privacy_relay::tokeniser::request::{tokenise_request, Route};
use privacy_relay::tokeniser::session::{NameModel, SessionOptions, TokeniserSession};
use privacy_relay::tokeniser::{detect_structured, tokenise_text, StreamingDetokeniser};
use privacy_relay::wire::ecdsa::SigningKey;
use serde_json::json;
use std::time::Instant;

fn prompt() -> String {
    let mut p = String::from(
        "Please draft a reply to the customer below and keep the tone friendly. \
         Customer: reach me at jane.doe@example.com or +44 20 7946 0958; card 4111 1111 1111 1111 was charged twice; \
         refund to DE89 3704 0044 0532 0130 00 and the login came from IP 203.0.113.45. ",
    );
    let pad = " The order was late and the box was damaged; they would like an apology and a delivery date.";
    // String.prototype.padEnd(2048, pad): repeat the pad, cut at 2048 characters.
    let mut i = 0;
    while p.len() < 2048 {
        p.push(pad.as_bytes()[i % pad.len()] as char);
        i += 1;
    }
    p
}

fn big(bytes: usize) -> String {
    let unit = "Ticket from jane.doe@example.com: call +44 20 7946 0958, card 4111 1111 1111 1111, host 10.0.0.5 in the log. Nothing else to say here today. ";
    unit.repeat(bytes / unit.len() + 1)[..bytes].to_string()
}

fn quantiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[(v.len() - 1) / 2], v[((v.len() - 1) as f64 * 0.95) as usize])
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let out = std::env::args().skip_while(|a| a != "--out").nth(1);
    let p = prompt();
    let key = SigningKey::generate();
    let mut off = Vec::new();
    for i in 0..600 {
        let mut session = TokeniserSession::new(SessionOptions { names: NameModel::Off, ..Default::default() });
        let t = Instant::now();
        let text = tokenise_text(&p, &mut session);
        if i >= 100 {
            off.push(ms(t));
        }
        assert_eq!(session.map().len(), 5, "{text}");
    }
    let attest = |names: NameModel| {
        let mut runs = Vec::new();
        for i in 0..600 {
            let body = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": p}]});
            let t = Instant::now();
            let r = tokenise_request(Route::ChatCompletions, &body, SessionOptions { names, ..Default::default() }).expect("tokenise");
            let input = AttestationInput {
                route: "chat.completions",
                body_bytes: &r.body_bytes,
                body_is_canonical: true,
                detectors_fired: r.detectors_fired.clone(),
                engine: privacy_relay::engine_identity(),
                trust_tier: None,
                jti: None,
                iat: None,
                passthrough: None,
                deterministic: false,
            };
            let envelope = build_attestation(&input, &key).expect("attestation");
            if i >= 100 {
                runs.push(ms(t));
            }
            assert!(envelope.get("sig").is_some());
        }
        quantiles(runs)
    };
    let (off_p50, off_p95) = quantiles(off);
    eprintln!("2 KB names off: p50 {off_p50:.3} ms");
    let (attest_off_p50, attest_off_p95) = attest(NameModel::Off);
    eprintln!("attest off: {attest_off_p50:.3} ms");
    let (attest_on_p50, attest_on_p95) = attest(NameModel::Builtin);
    eprintln!("attest on: {attest_on_p50:.3} ms");
    let regions = SessionOptions::default().regions();
    let structured = |n: usize| {
        let text = big(n);
        let t = Instant::now();
        let spans = detect_structured(&text, &regions);
        assert!(!spans.is_empty());
        ms(t)
    };
    let s100k = structured(100_000);
    eprintln!("100 KB structured {s100k:.0} ms");
    let s1m = structured(1_000_000);
    eprintln!("1 MB structured {s1m:.0} ms");
    let one_mb = big(1_000_000);
    let t = Instant::now();
    let mut session = TokeniserSession::new(SessionOptions::default());
    let tokenised = tokenise_text(&one_mb, &mut session);
    let tokenise_1m = ms(t);
    assert!(!tokenised.contains("jane.doe@example.com"));
    // Streaming: a 2 KB tokenised answer with 5 aliases in 20-character chunks.
    let mut session = TokeniserSession::new(SessionOptions { names: NameModel::Off, ..Default::default() });
    let answer = tokenise_text(&p, &mut session);
    let chunks: Vec<String> = answer.chars().collect::<Vec<_>>().chunks(20).map(|c| c.iter().collect()).collect();
    let mut per_chunk = Vec::new();
    for _ in 0..200 {
        let mut stream = StreamingDetokeniser::new(session.map().to_vec());
        let t = Instant::now();
        let mut shown = String::new();
        for c in &chunks {
            shown.push_str(&stream.push(c));
        }
        shown.push_str(&stream.flush());
        per_chunk.push(ms(t) / chunks.len() as f64);
        assert_eq!(shown, p);
    }
    let (chunk_p50, _) = quantiles(per_chunk);
    let result = json!({
        "engine": privacy_relay::engine_identity().header_value(),
        "prompt2kNamesOffP50Ms": off_p50, "prompt2kNamesOffP95Ms": off_p95,
        "tokeniseAttest2kNamesOffP50Ms": attest_off_p50, "tokeniseAttest2kNamesOffP95Ms": attest_off_p95,
        "tokeniseAttest2kNamesOnP50Ms": attest_on_p50, "tokeniseAttest2kNamesOnP95Ms": attest_on_p95,
        "structured100kMs": s100k, "structured1MMs": s1m, "tokenise1MNamesOnMs": tokenise_1m,
        "streamingPerChunkP50Ms": chunk_p50, "streamingChunkChars": 20
    });
    let text = serde_json::to_string_pretty(&result).expect("json");
    println!("{text}");
    if let Some(path) = out {
        std::fs::write(&path, text + "\n").expect("write results");
    }
}
