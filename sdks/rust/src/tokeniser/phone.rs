//! Phone numbers through a libphonenumber port (the `phonenumber` crate: parsing and validity against the full
//! numbering plans). The candidate finder is a port of libphonenumber's PhoneNumberMatcher (findNumbers with the
//! "valid" leniency, as libphonenumber-js runs it for the TypeScript engine); the rules around it are the
//! TypeScript engine's detectors/phone.ts.

use super::fields::{Ctx, FieldKind};
use super::jsre::test;
use super::text::{back, follows_non_personal_label, forward, is_delimited, text_before, u16len};
use super::types::{EntityType, Span};
use crate::re;
use phonenumber::country::Id;
use phonenumber::PhoneNumber;
use std::collections::HashMap;
use std::str::FromStr;

pub const DEFAULT_PHONE_REGIONS: [&str; 11] = ["US", "GB", "FR", "DE", "ES", "NL", "IE", "BE", "IT", "CH", "AT"];
const LABELLED_EXTRA: [&str; 24] = ["PT", "PL", "SE", "DK", "FI", "NO", "LU", "CZ", "SK", "HU", "RO", "BG", "GR", "HR", "SI", "EE", "LV", "LT", "MT", "CY", "IS", "LI", "CA", "AU"];

pub fn region_id(code: &str) -> Option<Id> {
    Id::from_str(&code.to_uppercase()).ok()
}

/// Parses `candidate` as libphonenumber does with `region` as the default region. The `phonenumber` crate strips
/// the DEFAULT region's national prefix from a number written with another country's "+" code ("+33 1 42 68 53
/// 00" under US lost its "1"), so a number of another country is parsed again under a region of its own code.
pub fn parse_number(region: Id, candidate: &str) -> Option<PhoneNumber> {
    use phonenumber::metadata::DATABASE;
    let number = phonenumber::parse(Some(region), candidate).ok()?;
    let code = number.code().value();
    if DATABASE.by_id(region.as_ref()).map(|m| m.country_code()) == Some(code) {
        return Some(number);
    }
    let metas = DATABASE.by_code(&code)?;
    let main = metas.iter().find(|m| m.is_main_country_for_code()).or(metas.first())?;
    let own = Id::from_str(main.id()).ok()?;
    phonenumber::parse(Some(own), candidate).ok()
}

fn anchored(src: &str, whole: bool) -> std::sync::Arc<regex::Regex> {
    use std::sync::{Arc, Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<(String, bool), Arc<regex::Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    map.entry((src.to_string(), whole))
        .or_insert_with(|| {
            // The metadata's patterns keep the XML's layout whitespace.
            let src: String = src.chars().filter(|c| !c.is_whitespace()).collect();
            let pattern = if whole { format!("^(?:{src})$") } else { format!("^(?:{src})") };
            Arc::new(regex::Regex::new(&pattern).unwrap_or_else(|_| regex::Regex::new("^\\b\\B$").expect("never")))
        })
        .clone()
}

fn desc_match(desc: Option<&phonenumber::metadata::Descriptor>, national: &str) -> bool {
    let Some(d) = desc else { return false };
    let lengths = d.possible_length();
    if !lengths.is_empty() && !lengths.contains(&(national.len() as u16)) {
        return false;
    }
    anchored(d.national_number().as_str(), true).is_match(national)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberType {
    Unknown,
    Other,
    FixedLine,
    Mobile,
    FixedLineOrMobile,
}

/// libphonenumber's getNumberTypeHelper with whole-number matches (the crate's own matches only anchor the start
/// and read the national number without its leading zeros).
fn number_type_in(meta: &phonenumber::Metadata, national: &str) -> NumberType {
    let d = meta.descriptors();
    if !desc_match(Some(d.general()), national) {
        return NumberType::Unknown;
    }
    let others = [d.premium_rate(), d.toll_free(), d.shared_cost(), d.voip(), d.personal_number(), d.pager(), d.uan(), d.voicemail()];
    if others.iter().any(|o| desc_match(*o, national)) {
        return NumberType::Other;
    }
    let same = d.fixed_line().map(|f| f.national_number().as_str()) == d.mobile().map(|m| m.national_number().as_str());
    if desc_match(d.fixed_line(), national) {
        if same || desc_match(d.mobile(), national) {
            return NumberType::FixedLineOrMobile;
        }
        return NumberType::FixedLine;
    }
    if !same && desc_match(d.mobile(), national) {
        return NumberType::Mobile;
    }
    NumberType::Unknown
}

/// The number's type in the region it belongs to (getRegionCodeForNumber), Unknown when it is not valid.
pub fn number_type(number: &PhoneNumber) -> NumberType {
    use phonenumber::metadata::DATABASE;
    let national = number.national().to_string();
    let code = number.code().value();
    let Some(regions) = DATABASE.region(&code) else { return NumberType::Unknown };
    let meta = if regions.len() == 1 {
        DATABASE.by_id(regions[0]).or_else(|| DATABASE.by_code(&code).and_then(|m| m.into_iter().next()))
    } else {
        regions.iter().filter_map(|r| DATABASE.by_id(*r)).find(|meta| match meta.leading_digits() {
            Some(ld) => anchored(ld.as_str(), false).is_match(&national),
            None => number_type_in(meta, &national) != NumberType::Unknown,
        })
    };
    meta.map_or(NumberType::Unknown, |m| number_type_in(m, &national))
}

pub fn is_valid_number(number: &PhoneNumber) -> bool {
    number_type(number) != NumberType::Unknown
}

/// One hit of the matcher: byte offsets into the text it was given, and the parsed number.
#[derive(Clone)]
pub struct Hit {
    pub starts_at: usize,
    pub ends_at: usize,
    pub number: PhoneNumber,
}

// ---- PhoneNumberMatcher ----

const PUNCT: &str = r"\-\x{2010}-\x{2015}\x{2212}\x{30FC}\x{FF0D}\x{FF0F}/\x{FF0E}. \x{A0}\x{AD}\x{200B}\x{2060}\x{3000}()\x{FF08}\x{FF09}\x{FF3B}\x{FF3D}\[\]~\x{2053}\x{223C}\x{FF5E}";

fn matcher_pattern() -> &'static regex::Regex {
    static CELL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let punctuation = format!("[{PUNCT}]{{0,4}}");
        let digits = r"\p{Nd}{1,20}";
        let ext = r"(?:[ \x{A0}\t,]*(?:e?xt(?:ensi(?:o\x{301}?|\x{F3}))?n?|\x{FF45}?\x{FF58}\x{FF54}\x{FF4E}?|доб|anexo)[:\.\x{FF0E}]?[ \x{A0}\t,-]*(\p{Nd}{1,20})#?|[ \x{A0}\t,]*(?:[x\x{FF58}#\x{FF03}~\x{FF5E}]|int|\x{FF49}\x{FF4E}\x{FF54})[:\.\x{FF0E}]?[ \x{A0}\t,-]*(\p{Nd}{1,9})#?|[- ]+(\p{Nd}{1,6})#)";
        let src = format!("(?i)(?:[(\\[\\x{{FF08}}\\x{{FF3B}}+\\x{{FF0B}}]{punctuation}){{0,2}}{digits}(?:{punctuation}{digits}){{0,20}}(?:{ext})?");
        regex::Regex::new(&src).expect("matcher pattern")
    })
}

fn is_latin_letter(c: char) -> bool {
    let cp = c as u32;
    let latin = cp <= 0x24F || (0x1E00..=0x1EFF).contains(&cp) || (0x300..=0x36F).contains(&cp);
    latin && (c.is_alphabetic() || (0x300..=0x36F).contains(&cp))
}

fn is_invalid_punctuation(c: char) -> bool {
    c == '%' || re!(r"^\p{Sc}$", "u").is_match(c.encode_utf8(&mut [0; 4])).unwrap_or(false)
}

fn matching_brackets(candidate: &str) -> bool {
    let open = r"(\[\x{FF08}\x{FF3B}";
    let close = r")\]\x{FF09}\x{FF3D}";
    let non = format!("[^{open}{close}]");
    static CELL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        regex::Regex::new(&format!("^(?:[{open}])?(?:{non}+[{close}])?{non}+(?:[{open}]{non}+[{close}]){{0,3}}{non}*$")).expect("brackets")
    })
    .is_match(candidate)
}

fn trim_after_first_match(re: &regex::Regex, s: &str) -> String {
    match re.find(s) {
        Some(m) => s[..m.start()].to_string(),
        None => s.to_string(),
    }
}

fn unwanted_end() -> &'static regex::Regex {
    static CELL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| regex::Regex::new(r"[^\p{N}\p{L}#]+$").expect("unwanted end"))
}

struct Matcher<'t> {
    text: &'t str,
    region: Id,
    max_tries: usize,
}

impl<'t> Matcher<'t> {
    fn contains_only_valid_x_chars(number: &PhoneNumber, candidate: &str) -> bool {
        let chars: Vec<(usize, char)> = candidate.char_indices().collect();
        let mut k = 0;
        while k + 1 < chars.len() {
            let c = chars[k].1;
            if c == 'x' || c == 'X' {
                let next = chars[k + 1].1;
                if next == 'x' || next == 'X' {
                    k += 1;
                } else {
                    let rest: String = candidate[chars[k].0..].chars().filter(|c| c.is_ascii_digit()).collect();
                    if number.extension().map(|e| e.to_string()) != Some(rest) {
                        return false;
                    }
                }
            }
            k += 1;
        }
        true
    }

    fn parse_and_verify(&self, candidate: &str, offset: usize) -> Option<Hit> {
        if candidate.is_empty() || !matching_brackets(candidate) || re!(r"\d{1,5}-+\d{1,5}\s{0,4}\(\d{1,4}").is_match(candidate).unwrap_or(false) {
            return None;
        }
        let lead = candidate.starts_with(['(', '[', '\u{FF08}', '\u{FF3B}', '+', '\u{FF0B}']);
        if offset > 0 && !lead {
            if let Some(prev) = self.text[..offset].chars().next_back() {
                if is_invalid_punctuation(prev) || is_latin_letter(prev) {
                    return None;
                }
            }
        }
        if let Some(next) = self.text[offset + candidate.len()..].chars().next() {
            if is_invalid_punctuation(next) || is_latin_letter(next) {
                return None;
            }
        }
        let number = parse_number(self.region, candidate)?;
        if !is_valid_number(&number) || !Self::contains_only_valid_x_chars(&number, candidate) {
            return None;
        }
        Some(Hit { starts_at: offset, ends_at: offset + candidate.len(), number })
    }

    fn extract_inner_match(&mut self, substring: &str, offset: usize) -> Option<Hit> {
        static INNER: std::sync::OnceLock<Vec<regex::Regex>> = std::sync::OnceLock::new();
        let inner = INNER.get_or_init(|| {
            [r"/+(.*)", r"(\([^(]*)", r"(?:\p{Z}-|-\p{Z})\p{Z}*(.+)", r"[\x{2012}-\x{2015}\x{FF0D}]\p{Z}*(.+)", r"\.+\p{Z}*([^.]+)", r"\p{Z}+(\P{Z}+)"]
                .iter()
                .map(|p| regex::Regex::new(p).expect("inner"))
                .collect()
        });
        for re in inner {
            let mut first = true;
            for caps in re.captures_iter(substring) {
                if self.max_tries == 0 {
                    break;
                }
                let m0 = caps.get(0).expect("match");
                if first {
                    let candidate = trim_after_first_match(unwanted_end(), &substring[..m0.start()]);
                    if let Some(hit) = self.parse_and_verify(&candidate, offset) {
                        return Some(hit);
                    }
                    self.max_tries = self.max_tries.saturating_sub(1);
                    first = false;
                }
                let group = caps.get(1).map_or("", |g| g.as_str());
                let candidate = trim_after_first_match(unwanted_end(), group);
                let guess = substring[m0.start()..].find(candidate.as_str()).map_or(0, |i| i + m0.start());
                if let Some(hit) = self.parse_and_verify(&candidate, offset + guess) {
                    return Some(hit);
                }
                self.max_tries = self.max_tries.saturating_sub(1);
            }
        }
        None
    }

    fn find_all(mut self) -> Vec<Hit> {
        let mut hits = Vec::new();
        let mut search = 0;
        static SECOND_START: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let second_start = SECOND_START.get_or_init(|| regex::Regex::new(r"[\\/] *x").expect("second start"));
        while self.max_tries > 0 && search < self.text.len() {
            let Some(m) = matcher_pattern().find_at(self.text, search) else { break };
            let offset = m.start();
            let candidate = trim_after_first_match(second_start, m.as_str());
            let mut matched = None;
            if self.valid_pre_candidate(&candidate, offset) {
                matched = self.parse_and_verify(&candidate, offset).or_else(|| self.extract_inner_match(&candidate, offset));
            }
            if let Some(hit) = matched {
                search = hit.ends_at.max(offset + 1);
                hits.push(hit);
                continue;
            }
            search = (offset + candidate.len()).max(offset + 1);
            while !self.text.is_char_boundary(search) {
                search += 1;
            }
            // The inner search may have spent the last tries already (libphonenumber-js's count goes below zero and
            // its loop stops; a plain `-= 1` here overflowed: a panic in a debug build, unlimited tries in release).
            self.max_tries = self.max_tries.saturating_sub(1);
        }
        hits
    }

    fn valid_pre_candidate(&self, candidate: &str, offset: usize) -> bool {
        if re!(r"(?:(?:[0-3]?\d/[01]?\d)|(?:[01]?\d/[0-3]?\d))/(?:[12]\d)?\d{2}").is_match(candidate).unwrap_or(false) {
            return false;
        }
        if re!(r"[12]\d{3}[-/]?[01]\d[-/]?[0-3]\d +[0-2]\d$").is_match(candidate).unwrap_or(false) {
            let following = &self.text[offset + candidate.len()..];
            if re!(r"^:[0-5]\d").is_match(following).unwrap_or(false) {
                return false;
            }
        }
        true
    }
}

/// findNumbers(text, { defaultCountry, v2: true, maxTries? }) with the "valid" leniency.
pub fn find_numbers(text: &str, region: Id, max_tries: Option<usize>) -> Vec<Hit> {
    Matcher { text, region, max_tries: max_tries.unwrap_or(usize::MAX) }.find_all()
}

// ---- The detector ----

fn is_international(raw: &str) -> bool {
    raw.starts_with('+') || (raw.len() >= 3 && raw.starts_with("00") && (b'1'..=b'9').contains(&raw.as_bytes()[2]))
}

fn looks_like_national_phone(text: &str, start: usize, raw: &str, labelled: bool, trunk_mobile: bool) -> bool {
    let digits = raw.bytes().filter(u8::is_ascii_digit).count();
    if digits < 9 {
        return false;
    }
    let body = re!(r"\s*(?:ext\.?|x|#)\s*\d+$", "i").replace(raw, "").to_string();
    let groups: Vec<&str> = body.split(|c: char| !c.is_ascii_digit()).filter(|g| !g.is_empty()).collect();
    if groups.iter().skip(1).any(|g| g.len() < 2) {
        return false;
    }
    if body.contains('.') && !test(re!(r"^\d{3}\.\d{3}\.\d{4}$"), &body) && !test(re!(r"^0\d(?:\.\d{2}){4}$"), &body) {
        return false;
    }
    let dutch_dash = test(re!(r"^0\d{1,3}-\d{3,8}(?: \d{2,4})*$"), &body) && digits == 10;
    if body.contains('-') && !dutch_dash {
        let without_area = re!(r"^\(\d+\)\s*").replace(&body, "").to_string();
        if without_area.split(['-', ' ']).any(|g| u16len(g) < 2 || u16len(g) > 4) {
            return false;
        }
        if test(re!(r"^\d{3}-\d{2}-\d{4}$"), &body) {
            return false;
        }
    }
    if body.bytes().all(|b| b.is_ascii_digit()) && !body.is_empty() {
        let cue = re!(r"\b(?:tel|tél|phone|telephone|téléphone|telefon|telefono|teléfono|telefoon|mobile|mobil|mobiel|móvil|cell|cellphone|handy|portable|fax|call|calling|dial|ring|ruf|rufen|appelez|appeler|llama|llámame|llámanos|bel|chiama|chiamami|text|sms|whatsapp|number|numéro|nummer|número|numero|contact|joindre|joignable|erreichbar|anrufen|bereikbaar|contactar|llamar|localizar)\b[^\n\d]{0,20}$", "i");
        return labelled || trunk_mobile || test(cue, text_before(text, start, 40));
    }
    true
}

/// Brackets holding no digit blanked out, cell separators turned into line breaks (byte offsets unchanged).
fn without_empty_brackets(text: &str) -> String {
    let blanked = re!(r"[(\[][^\d()[\]\n]*[)\]]", "g").replace_all(text, |c: &super::jsre::Captures<'_>| " ".repeat(c.get(0).map_or(0, |m| m.as_str().len())));
    blanked.chars().map(|c| if matches!(c, ',' | ';' | '|' | '\t') { '\n' } else { c }).collect()
}

const PIECE_CHARS: usize = 64;
const PIECE_STEP: usize = 32;
const PIECE_GROUPS: usize = 21;
const PIECE_TRIES: usize = PIECE_GROUPS + 4;
const MIXED_PIECE_TRIES: usize = 8;

fn digits_and_spaces(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b' ')
}

fn tries_for(piece: &str) -> usize {
    if digits_and_spaces(piece) {
        PIECE_TRIES
    } else {
        MIXED_PIECE_TRIES
    }
}

fn cannot_hold_phone(piece: &str) -> bool {
    digits_and_spaces(piece) && piece.bytes().filter(u8::is_ascii_digit).count() > 24 && !test(re!(r"\d{7}"), piece)
}

/// [start, end) byte ranges of `segment` to read: the segment itself, or overlapping pieces of a long one.
/// (A segment is ASCII but for no-break spaces; lengths are counted in characters as in the TypeScript engine.)
fn pieces_of(segment: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = segment.char_indices().collect();
    let n = chars.len();
    let byte = |i: usize| if i >= n { segment.len() } else { chars[i].0 };
    if n <= PIECE_CHARS {
        return vec![(0, segment.len())];
    }
    let is_digit = |i: usize| chars[i].1.is_ascii_digit();
    let mut group_starts = Vec::new();
    let mut group_ends = Vec::new();
    for i in 0..n {
        let d = is_digit(i);
        if d && (i == 0 || !is_digit(i - 1)) {
            group_starts.push(if i > 0 && matches!(chars[i - 1].1, '+' | '(') { i - 1 } else { i });
        }
        if d && (i == n - 1 || !is_digit(i + 1)) {
            group_ends.push(i + 1);
        }
    }
    let mut pieces = Vec::new();
    let (mut g, mut e, mut start) = (0usize, 0usize, 0usize);
    loop {
        while e + 1 < group_ends.len() && group_ends[e + 1] - start <= PIECE_CHARS && e + 1 - g < PIECE_GROUPS {
            e += 1;
        }
        let end = if group_ends[e] > start && group_ends[e] - start <= PIECE_CHARS { group_ends[e] } else { n.min(start + PIECE_CHARS) };
        pieces.push((byte(start), byte(end)));
        if end >= n {
            break;
        }
        while g + 1 < group_starts.len() && group_starts[g + 1] <= start + PIECE_STEP {
            g += 1;
        }
        start = if group_starts[g] > start { group_starts[g] } else { start + PIECE_STEP };
    }
    pieces
}

fn unbalanced(s: &str) -> i64 {
    s.matches('(').count() as i64 - s.matches(')').count() as i64
}

pub fn detect_phones(ctx: &Ctx<'_>, regions: &[Id]) -> Vec<Span> {
    let text = ctx.text;
    let mut found: Vec<Span> = Vec::new();
    if text.bytes().filter(u8::is_ascii_digit).count() >= 7 && !regions.is_empty() {
        let scanned = without_empty_brackets(text);
        let mut memo: HashMap<(Id, bool, String), Vec<Hit>> = HashMap::new();
        let segment_re = re!(r"[+(]?\d[\d \u00a0().\-\/]*\d(?:\s*(?:ext\.?|x|#)\s*\d{1,6})?", "gi");
        for whole in segment_re.find_iter(&scanned).flatten() {
            let whole_text = whole.as_str();
            let long_run = u16len(whole_text) > PIECE_CHARS;
            for (ps, pe) in pieces_of(whole_text) {
                let seg = &whole_text[ps..pe];
                let seg_start = whole.start() + ps;
                let digit_count = seg.bytes().filter(u8::is_ascii_digit).count();
                if digit_count < 7 {
                    continue;
                }
                if long_run && cannot_hold_phone(seg) {
                    continue;
                }
                let from = if ps == 0 { back(&scanned, seg_start, 8) } else { seg_start };
                if digit_count < 9 && !seg.starts_with('+') && !test(re!(r"\+\s*$"), &scanned[from..seg_start]) {
                    continue;
                }
                let to = if pe == whole_text.len() { forward(&scanned, seg_start + seg.len(), 8) } else { seg_start + seg.len() };
                let window = &scanned[from..to];
                let international = seg.starts_with('+') && !seg[1..].contains('+');
                let tried = if international { &regions[..1] } else { regions };
                for region in tried {
                    let key = (*region, long_run, window.to_string());
                    let hits = memo
                        .entry(key)
                        .or_insert_with(|| find_numbers(window, *region, if long_run { Some(tries_for(window)) } else { None }))
                        .clone();
                    for hit in hits {
                        let (mut start, mut end) = (from + hit.starts_at, from + hit.ends_at);
                        loop {
                            if end - start <= 1 {
                                break;
                            }
                            let head = &text[start..end];
                            if !test(re!(r"^(?:\d|\+|\(\+?\d)"), head) || (head.starts_with('(') && unbalanced(head) > 0) {
                                start += head.chars().next().map_or(1, char::len_utf8);
                            } else {
                                break;
                            }
                        }
                        while unbalanced(&text[start..end]) < 0 && text[start..end].ends_with(')') {
                            end -= 1;
                        }
                        let raw = &text[start..end];
                        if !raw.starts_with('+') && follows_non_personal_label(text, start) {
                            continue;
                        }
                        if !is_delimited(text, start, end) {
                            continue;
                        }
                        let kind = ctx.field_kind_at(start, end);
                        if ctx.whole_value_kind_at(start, end) == Some(FieldKind::Reference) && !is_international(raw) {
                            continue;
                        }
                        if hit.number.extension().is_some() && !test(re!(r"(?:ext\.?|x|#)\s*\d+$", "i"), raw) {
                            continue;
                        }
                        let trunk_mobile = test(re!(r"^0[1-9]\d{8,9}$"), raw)
                            && number_type(&hit.number) == NumberType::Mobile;
                        if !is_international(raw) && !looks_like_national_phone(text, start, raw, kind == Some(FieldKind::Phone), trunk_mobile) {
                            continue;
                        }
                        found.push(Span::new(start, end, EntityType::Phone));
                    }
                }
            }
        }
    }
    let labelled = labelled_phones(ctx, &found);
    found.extend(labelled);
    let mut seen = std::collections::HashSet::new();
    found.retain(|s| seen.insert((s.start, s.end)));
    found
}

fn labelled_phones(ctx: &Ctx<'_>, found: &[Span]) -> Vec<Span> {
    let text = ctx.text;
    let mut out = Vec::new();
    let fields = ctx.fields_of_kind(FieldKind::Phone);
    if fields.is_empty() {
        return out;
    }
    let regions: Vec<Id> = DEFAULT_PHONE_REGIONS.iter().chain(LABELLED_EXTRA.iter()).filter_map(|c| region_id(c)).collect();
    // Found spans by start, for an overlap test per field in log time (a long phone column is thousands of fields).
    let mut by_start: Vec<(usize, usize)> = found.iter().map(|s| (s.start, s.end)).collect();
    by_start.sort_unstable();
    let mut max_end: Vec<usize> = Vec::with_capacity(by_start.len());
    for (i, (_, e)) in by_start.iter().enumerate() {
        max_end.push(if i == 0 { *e } else { max_end[i - 1].max(*e) });
    }
    let overlaps = |start: usize, end: usize| {
        // Spans starting before `end`; the one reaching furthest decides whether any ends after `start`.
        let k = by_start.partition_point(|(s, _)| *s < end);
        k > 0 && max_end[k - 1] > start
    };
    for f in fields {
        if overlaps(f.start, f.end) {
            continue;
        }
        let value: String = text[f.start..f.end].chars().map(|c| if matches!(c, ',' | ';' | '|' | '\t') { '\n' } else { c }).collect();
        for region in &regions {
            let Some(hit) = find_numbers(&value, *region, None).into_iter().next() else { continue };
            let (start, end) = (f.start + hit.starts_at, f.start + hit.ends_at);
            if is_delimited(text, start, end) && test(re!(r"^[+(\d]"), &text[start..end]) {
                out.push(Span::new(start, end, EntityType::Phone));
            }
            break;
        }
    }
    out
}
