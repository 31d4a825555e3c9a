//! Prints the engine's spans (UTF-16 offsets) for every item of JSON-lines corpora: structured detectors with
//! the default regions, the portable name model's names, and the engine's answer with names on (`spans`). Used to compare the engine with the TypeScript one on
//! the project's evaluation set (test/fixtures/pii-corpus).
//! Run: cargo run --release --example corpus_spans -- test/fixtures/pii-corpus/eval/dev.jsonl > rs-spans.jsonl
use privacy_relay::tokeniser::fields::Ctx;
use privacy_relay::tokeniser::text::Utf16Index;
use privacy_relay::tokeniser::{detect_spans, detect_structured, names, session::SessionOptions};
use serde_json::{json, Value};

fn main() {
    let regions = SessionOptions::default().regions();
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).expect("corpus file");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let item: Value = serde_json::from_str(line).expect("JSON line");
            let t = item["text"].as_str().unwrap_or_default();
            let index = Utf16Index::new(t);
            let out = |spans: Vec<privacy_relay::tokeniser::Span>| -> Vec<Value> {
                spans.iter().map(|s| json!([index.at(s.start), index.at(s.end), s.ty.as_str()])).collect()
            };
            let structured = out(detect_structured(t, &regions));
            let rules = out(names::detect_names(&Ctx::new(t)));
            let spans = out(detect_spans(t, &SessionOptions::default()));
            println!("{}", json!({"id": item["id"], "structured": structured, "rules": rules, "spans": spans}));
        }
    }
}
