//! Times each detector on one text: cargo run --release --example profile_detectors -- <bytes> [<unit>]
//! The text is <unit> repeated to <bytes> (default: a ticket with an e-mail, a phone, a card and an IP address);
//! `-- 2000000 "12 "` is the run of short numbers the card scanner's lead-digit skip is for (docs/benchmark.md).
use privacy_relay::tokeniser::fields::Ctx;
use privacy_relay::tokeniser::{detectors, iban, names, phone, session::SessionOptions};
use std::time::Instant;
fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let ticket = "Ticket from jane.doe@example.com: call +44 20 7946 0958, card 4111 1111 1111 1111, host 10.0.0.5 in the log. Nothing else to say here today. ";
    let unit = std::env::args().nth(2).unwrap_or_else(|| ticket.to_string());
    let text = unit.repeat(n / unit.len() + 1)[..n].to_string();
    let regions = SessionOptions::default().regions();
    let _ = phone::parse_number(regions[0], "+44 20 7946 0958");
    let list: Vec<(&str, fn(&Ctx<'_>) -> Vec<privacy_relay::tokeniser::Span>)> = vec![
        ("url", detectors::url_credentials), ("email", detectors::email), ("iban", iban::iban), ("card", detectors::card),
        ("fr_nir", detectors::fr_nir), ("us_ssn", detectors::us_ssn), ("uk_nino", detectors::uk_nino), ("es_dni", detectors::es_dni),
        ("nl_bsn", detectors::nl_bsn), ("national_id", detectors::national_id), ("dob", detectors::date_of_birth),
        ("passport", detectors::passport), ("wallet", detectors::crypto_wallet), ("ipv6", detectors::ipv6), ("ipv4", detectors::ipv4),
        ("names", names::detect_names),
    ];
    let ctx = Ctx::new(&text);
    let t = Instant::now();
    ctx.fields();
    println!("fields {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    for (name, d) in list {
        let t = Instant::now();
        let s = d(&ctx);
        println!("{name} {:.1} ms ({} spans)", t.elapsed().as_secs_f64() * 1000.0, s.len());
    }
    let t = Instant::now();
    let s = phone::detect_phones(&ctx, &regions);
    println!("phone {:.1} ms ({} spans)", t.elapsed().as_secs_f64() * 1000.0, s.len());
    let t = Instant::now();
    let r = iban::rejected_iban_runs(&text);
    println!("rejected iban {:.1} ms ({})", t.elapsed().as_secs_f64() * 1000.0, r.len());
}
