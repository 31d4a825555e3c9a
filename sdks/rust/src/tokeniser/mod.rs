//! The client-side tokeniser: detect personal data, replace it with aliases, restore the originals in
//! responses. The same types, rules, aliases and request walk as the TypeScript engine (sdks/typescript/src/
//! tokeniser), held to sdks/vectors (aliases.json, tokeniser-spans.json).

pub mod detectors;
pub mod egress;
pub mod fields;
pub mod iban;
pub mod jsre;
pub mod mrz;
pub mod names;
pub mod phone;
pub mod request;
pub mod session;
pub mod text;
pub mod types;

pub use request::{tokenise_request, Route, TokeniseError, TokenisedRequest};
pub use session::{NameModel, SessionOptions, TokeniserSession};
pub use types::{EntityType, Span, ENTITY_TYPES, PRIORITY};

use fields::Ctx;
use std::collections::BTreeMap;

/// The alias pattern (alias.ts ALIAS_PATTERN).
pub const ALIAS_PATTERN: &str = r"<[A-Z][A-Z0-9_]*_(?:\d+_[a-z2-9]{4}|[a-z2-9]{10})>";
pub const TAG_ALPHABET: &str = "abcdefghijkmnpqrstuvwxyz23456789";
pub const REQUEST_TAG_LENGTH: usize = 4;
pub const STABLE_TAG_LENGTH: usize = 10;

pub fn alias_regex() -> &'static regex::Regex {
    static CELL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| regex::Regex::new(&ALIAS_PATTERN.replace("\\d", "[0-9]")).expect("alias pattern"))
}

/// True when `text` is exactly one alias.
pub fn is_alias(text: &str) -> bool {
    alias_regex().find(text).map_or(false, |m| m.start() == 0 && m.end() == text.len())
}

/// The first `length` characters (5 bits from each byte) of a MAC, in the tag alphabet.
pub fn tag_from_mac(mac: &[u8], length: usize) -> String {
    mac.iter().take(length).map(|b| TAG_ALPHABET.as_bytes()[(b & 31) as usize] as char).collect()
}

/// Keeps a non-overlapping subset: higher priority first, then the longer span, then the earlier one.
pub fn resolve_overlaps(text: &str, spans: &[Span]) -> Vec<Span> {
    let mut ordered: Vec<(usize, usize, Span)> = spans.iter().map(|s| (s.ty.priority(), text::u16len(&text[s.start..s.end]), *s)).collect();
    ordered.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.start.cmp(&b.2.start)));
    let mut kept: BTreeMap<usize, Span> = BTreeMap::new();
    for (_, _, s) in ordered {
        if s.end <= s.start {
            continue;
        }
        let next_ok = kept.range(s.start..).next().map_or(true, |(_, n)| s.end <= n.start);
        let prev_ok = kept.range(..s.start).next_back().map_or(true, |(_, p)| p.end <= s.start);
        if next_ok && prev_ok {
            kept.insert(s.start, s);
        }
    }
    kept.into_values().collect()
}

/// `text` with every span replaced by as many "Q"s (byte offsets unchanged).
fn mask_spans(text: &str, spans: &[Span]) -> String {
    let mut ordered: Vec<&Span> = spans.iter().collect();
    ordered.sort_by_key(|s| s.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in ordered {
        if s.end <= at {
            continue;
        }
        let from = at.max(s.start);
        out.push_str(&text[at..from]);
        out.extend(std::iter::repeat('Q').take(s.end - from));
        at = s.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Runs the structured detectors. The phone parser runs last, on the text with every other detection masked.
pub fn detect_structured(text: &str, phone_regions: &[phonenumber::country::Id]) -> Vec<Span> {
    let ctx = Ctx::new(text);
    let rejected = iban::rejected_iban_runs(text);
    let outside = |s: &Span| !rejected.iter().any(|(rs, re)| s.start < *re && s.end > *rs);
    let detectors: [fn(&Ctx<'_>) -> Vec<Span>; 16] = [
        mrz::mrz,
        detectors::url_credentials,
        detectors::email,
        iban::iban,
        detectors::card,
        detectors::fr_nir,
        detectors::us_ssn,
        detectors::uk_nino,
        detectors::es_dni,
        detectors::nl_bsn,
        detectors::national_id,
        detectors::date_of_birth,
        detectors::passport,
        detectors::crypto_wallet,
        detectors::ipv6,
        detectors::ipv4,
    ];
    let mut others: Vec<Span> = Vec::new();
    for d in detectors {
        others.extend(d(&ctx).into_iter().filter(|s| outside(s)));
    }
    let mut masks = others.clone();
    masks.extend(rejected.iter().map(|(s, e)| Span::new(*s, *e, EntityType::Iban)));
    let masked = mask_spans(text, &masks);
    let phones = phone::detect_phones(&Ctx::new(&masked), phone_regions);
    others.extend(phones);
    resolve_overlaps(text, &others)
}

/// Every value the session's detectors and name model find in `text`, non-overlapping, in text order.
pub fn detect_spans(text: &str, options: &SessionOptions) -> Vec<Span> {
    let regions = options.regions();
    let mut spans = detect_structured(text, &regions);
    if options.names == NameModel::Builtin {
        spans.extend(names::detect_names(&Ctx::new(text)));
    }
    resolve_overlaps(text, &spans)
}

/// Restores the originals of aliases present in `map`; any other token-looking text is left untouched.
pub fn detokenise(text: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    alias_regex().replace_all(text, |c: &regex::Captures<'_>| lookup(&c[0]).unwrap_or_else(|| c[0].to_string())).into_owned()
}

/// Detokenises a stream whose chunk boundaries may cut an alias in two: only the text from the LAST "<" can be
/// the start of an alias still arriving; it is held back while it is a proper prefix of an alias in the map.
pub struct StreamingDetokeniser {
    map: std::collections::HashMap<String, String>,
    sorted: Vec<String>,
    pending: String,
}

impl StreamingDetokeniser {
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        let map: std::collections::HashMap<String, String> = pairs.into_iter().collect();
        let mut sorted: Vec<String> = map.keys().cloned().collect();
        sorted.sort();
        StreamingDetokeniser { map, sorted, pending: String::new() }
    }

    fn is_proper_prefix(&self, tail: &str) -> bool {
        let k = self.sorted.partition_point(|a| a.as_str() < tail);
        self.sorted[k..].iter().take_while(|a| a.starts_with(tail)).any(|a| a.len() > tail.len())
    }

    fn restore(&self, text: &str) -> String {
        detokenise(text, |a| self.map.get(a).cloned())
    }

    /// Feeds the next chunk; returns the text that is safe to show now.
    pub fn push(&mut self, chunk: &str) -> String {
        self.pending.push_str(chunk);
        if let Some(lt) = self.pending.rfind('<') {
            if self.is_proper_prefix(&self.pending[lt..]) {
                let ready: String = self.pending[..lt].to_string();
                self.pending.drain(..lt);
                return self.restore(&ready);
            }
        }
        let ready = std::mem::take(&mut self.pending);
        self.restore(&ready)
    }

    /// Ends the stream; returns whatever was held back.
    pub fn flush(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.restore(&rest)
    }
}

/// Replaces every detected value in `text` with its alias in `session`.
pub fn tokenise_text(text: &str, session: &mut TokeniserSession) -> String {
    session.observe(text);
    if text.is_empty() {
        return String::new();
    }
    let spans = detect_spans(text, &session.options);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in spans {
        out.push_str(&text[at..s.start]);
        out.push_str(&session.alias_for(s.ty, &text[s.start..s.end]));
        session.count_fired(s.ty);
        at = s.end;
    }
    out.push_str(&text[at..]);
    out
}
