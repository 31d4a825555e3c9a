//! The structured detectors (every type but PHONE and IBAN, which have files of their own): the same patterns,
//! check rules and context cues as the TypeScript engine's detectors/*.ts.

use super::fields::{mentioned_before, mentions, Ctx, FieldKind};
use super::jsre::test;
use super::text::{follows_non_personal_label, is_delimited, text_before, u16len};
use super::types::{EntityType, Span};
use crate::re;
use super::jsre::{Captures, Regex};

/// Runs a global regex and turns each accepted match into a span of `ty`.
pub fn spans_from_regex(text: &str, re: &Regex, ty: EntityType, mut accept: impl FnMut(&Captures<'_>) -> Option<(usize, usize)>) -> Vec<Span> {
    let mut spans = Vec::new();
    for caps in re.captures_iter(text) {
        let Ok(caps) = caps else { break };
        let whole = caps.get(0).expect("match");
        if whole.start() == whole.end() {
            continue;
        }
        if let Some((s, e)) = accept(&caps) {
            spans.push(Span::new(s, e, ty));
        }
    }
    spans
}

pub(crate) fn g<'t>(c: &Captures<'t>, i: usize) -> &'t str {
    c.get(i).map_or("", |m| m.as_str())
}

pub(crate) fn whole(c: &Captures<'_>) -> (usize, usize) {
    let m = c.get(0).expect("match");
    (m.start(), m.end())
}

// ---- URL credentials, e-mail ----

pub fn url_credentials(ctx: &Ctx<'_>) -> Vec<Span> {
    let re = re!(r#"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,15}:\/\/[^\s:/@?#<>"']*:[^\s/@?#<>"']+@[A-Za-z0-9.\-_\[\]:]*[A-Za-z0-9\]]"#, "g");
    spans_from_regex(ctx.text, re, EntityType::UrlCredentials, |c| Some(whole(c)))
}

/// The repeated parts of the pattern are bounded (256 dot-atoms, 127 labels, beyond what an address can hold): about a
/// hundred thousand "a." hit PCRE2's limit, read as "no match", and the addresses after them were missed.
pub fn email(ctx: &Ctx<'_>) -> Vec<Span> {
    let text = ctx.text;
    if !text.contains('@') {
        return Vec::new();
    }
    let re = re!(r"(?<![\p{L}\p{N}\p{M}._%+\-])[\p{L}\p{M}\p{N}_%+\-]+(?:\.[\p{L}\p{M}\p{N}_%+\-]+){0,255}@(?:[\p{L}\p{N}](?:[\p{L}\p{M}\p{N}\-]{0,61}[\p{L}\p{M}\p{N}])?\.){1,127}\p{L}[\p{L}\p{M}]{1,62}(?![\p{L}\p{M}\p{N}\-]|\.[\p{L}\p{N}])", "gu");
    spans_from_regex(text, re, EntityType::Email, |c| {
        let (s, e) = whole(c);
        // "git@github.com:org/repo.git" is an scp-style remote (user@host:path), not a mailbox.
        let mut after = text[e..].chars();
        if after.next() == Some(':') && after.next().map_or(false, |c| !super::fields::is_js_space(c)) {
            return None;
        }
        Some((s, e))
    })
}

// ---- Cards ----

fn passes_luhn(digits: &str) -> bool {
    let mut sum = 0;
    let mut double = false;
    for b in digits.bytes().rev() {
        let mut d = (b - b'0') as u32;
        if double {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
        double = !double;
    }
    !digits.is_empty() && sum % 10 == 0
}

fn prefix_in(d: &str, width: usize, low: u32, high: u32) -> bool {
    d.get(..width).and_then(|p| p.parse::<u32>().ok()).map_or(false, |p| p >= low && p <= high)
}

pub fn card_scheme(d: &str) -> Option<&'static str> {
    let n = d.len();
    let schemes: [(&str, bool, &[usize]); 7] = [
        ("visa", d.starts_with('4'), &[13, 16, 19]),
        ("mastercard", prefix_in(d, 2, 51, 55) || prefix_in(d, 4, 2221, 2720), &[16]),
        ("amex", d.starts_with("34") || d.starts_with("37"), &[15]),
        ("discover", d.starts_with("6011") || d.starts_with("65") || prefix_in(d, 3, 644, 649), &[16, 17, 18, 19]),
        ("jcb", prefix_in(d, 4, 3528, 3589), &[16, 17, 18, 19]),
        ("diners", d.starts_with("36") || prefix_in(d, 3, 300, 305), &[14, 15, 16, 17, 18, 19]),
        ("unionpay", d.starts_with("62"), &[16, 17, 18, 19]),
    ];
    schemes.iter().find(|(_, m, lengths)| *m && lengths.contains(&n)).map(|(name, _, _)| *name)
}

pub fn is_valid_card_number(d: &str) -> bool {
    (13..=19).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()) && card_scheme(d).is_some() && passes_luhn(d)
}

struct Group {
    start: usize,
    end: usize,
}

const MAX_GROUPS: usize = 19;

fn cards_in(ctx: &Ctx<'_>, groups: &[Group]) -> Vec<Span> {
    let text = ctx.text;
    let n = groups.len();
    let mut digits = vec![0usize];
    let mut unprinted = vec![0usize];
    for g in groups {
        let len = g.end - g.start;
        digits.push(digits[digits.len() - 1] + len);
        unprinted.push(unprinted[unprinted.len() - 1] + usize::from(!(2..=8).contains(&len)));
    }
    let mut starts_by_size: Vec<(usize, Vec<usize>)> = Vec::new();
    for size in 1..=n.min(MAX_GROUPS) {
        let mut valid = Vec::new();
        for i in 0..=(n - size) {
            let count = digits[i + size] - digits[i];
            if !(13..=19).contains(&count) {
                continue;
            }
            if size > 1 && unprinted[i + size] - unprinted[i] > 0 {
                continue;
            }
            // Every scheme's issuer range starts with 2 to 6 (card_scheme): skip the join and the checks for any other
            // first digit, which long runs of other numbers ("12 12 12 ...") would otherwise pay millions of times
            // (the TypeScript engine's detectors/card.ts and the Python SDK's card.py skip them the same way).
            if !(b'2'..=b'6').contains(&text.as_bytes()[groups[i].start]) {
                continue;
            }
            let joined: String = groups[i..i + size].iter().map(|g| &text[g.start..g.end]).collect();
            if !is_valid_card_number(&joined) {
                continue;
            }
            let (start, end) = (groups[i].start, groups[i + size - 1].end);
            if !is_delimited(text, start, end) || follows_non_personal_label(text, start) {
                continue;
            }
            if ctx.whole_value_kind_at(start, end) == Some(FieldKind::Reference) {
                continue;
            }
            valid.push(i);
        }
        if !valid.is_empty() {
            starts_by_size.push((size, valid));
        }
    }
    starts_by_size.sort_by(|a, b| b.0.cmp(&a.0));
    let mut found = Vec::new();
    enum Item {
        Range(usize, usize),
        Found(Span),
    }
    let mut stack = vec![Item::Range(0, n)];
    while let Some(item) = stack.pop() {
        let (lo, hi) = match item {
            Item::Found(s) => {
                found.push(s);
                continue;
            }
            Item::Range(lo, hi) => (lo, hi),
        };
        for (size, starts) in &starts_by_size {
            let a = starts.partition_point(|s| *s < lo);
            if let Some(&i) = starts.get(a) {
                if i + size <= hi {
                    stack.push(Item::Range(i + size, hi));
                    stack.push(Item::Found(Span::new(groups[i].start, groups[i + size - 1].end, EntityType::Card)));
                    stack.push(Item::Range(lo, i));
                    break;
                }
            }
        }
    }
    found
}

/// Each candidate run of card groups as (start, end) byte offsets, left to right: the leftmost longest run of digits
/// joined by one separator kind (one space or one dash); a space-joined run followed by "-digit" gives up its last
/// group, as the former pattern's lookahead `(?![\d]|-\d)` did (the TypeScript engine's detectors/digitGroupRuns.ts).
/// Followed by hand, not by one pattern: about a hundred thousand groups ("1 1 1 ...") hit PCRE2's limit, read as
/// "no match", so the cards after such a run were sent in the clear (sdks/vectors/tokeniser-large.json).
fn card_candidates(text: &str) -> Vec<(usize, usize)> {
    let start_re = re!(r"(?<![\d\-+])\d+", "g");
    let bytes = text.as_bytes();
    let is_digit = |at: usize| at < bytes.len() && bytes[at].is_ascii_digit();
    let mut runs = Vec::new();
    let mut pos = 0;
    while let Ok(Some(m)) = start_re.find_from_pos(text, pos) {
        let mut end = m.end();
        let mut before_last = end;
        let separator = bytes.get(end).copied();
        let mut joined = 0;
        if let Some(sep @ (b' ' | b'-')) = separator {
            while end < bytes.len() && bytes[end] == sep && is_digit(end + 1) {
                before_last = end;
                end += 1;
                while is_digit(end) {
                    end += 1;
                }
                joined += 1;
            }
        }
        if joined > 0 && separator == Some(b' ') && bytes.get(end) == Some(&b'-') && is_digit(end + 1) {
            end = before_last;
        }
        runs.push((m.start(), end));
        pos = end;
    }
    runs
}

pub fn card(ctx: &Ctx<'_>) -> Vec<Span> {
    let mut out = Vec::new();
    for (start, end) in card_candidates(ctx.text) {
        let groups: Vec<Group> = re!(r"\d+", "g")
            .find_iter(&ctx.text[start..end])
            .flatten()
            .map(|g| Group { start: start + g.start(), end: start + g.end() })
            .collect();
        out.extend(cards_in(ctx, &groups));
    }
    out
}

// ---- FR NIR, US SSN, UK NINO, ES DNI, NL BSN ----

fn mod_big(digits: &str, m: u64) -> u64 {
    digits.bytes().fold(0u64, |r, b| (r * 10 + (b - b'0') as u64) % m)
}

pub fn is_valid_fr_nir(value: &str) -> bool {
    let v: String = value.to_uppercase().chars().filter(|c| *c != ' ' && *c != '.' && !super::fields::is_js_space(*c)).collect();
    let Ok(Some(m)) = re!(r"^([12])(\d{2})(\d{2})(\d{2}|2A|2B)(\d{3})(\d{3})(\d{2})$").captures(&v) else { return false };
    let month: u32 = g(&m, 3).parse().unwrap_or(0);
    if !((1..=12).contains(&month) || (20..=42).contains(&month) || (50..=99).contains(&month)) {
        return false;
    }
    let dept = match g(&m, 4) {
        "2A" => "19",
        "2B" => "18",
        d => d,
    };
    let body = format!("{}{}{}{}{}{}", g(&m, 1), g(&m, 2), g(&m, 3), dept, g(&m, 5), g(&m, 6));
    97 - mod_big(&body, 97) == g(&m, 7).parse::<u64>().unwrap_or(1000)
}

pub fn fr_nir(ctx: &Ctx<'_>) -> Vec<Span> {
    let re = re!(r"(?<![\p{L}\p{N}])[12](?:([ .]?)\d{2}\1\d{2}\1(?:\d{2}|2[AB])\1\d{3}\1\d{3}\1\d{2})(?![\p{L}\p{N}])", "gu");
    spans_from_regex(ctx.text, re, EntityType::FrNir, |c| is_valid_fr_nir(g(c, 0)).then(|| whole(c)))
}

pub fn is_valid_ssn(area: &str, group: &str, serial: &str) -> bool {
    let a: u32 = area.parse().unwrap_or(0);
    a != 0 && a != 666 && a < 900 && group != "00" && serial != "0000"
}

pub fn us_ssn(ctx: &Ctx<'_>) -> Vec<Span> {
    let text = ctx.text;
    let printed = re!(r"(?<![\d\-])(\d{3})([\- ])(\d{2})\2(\d{4})(?![\d]|-\d)", "g");
    let bare = re!(r"(?<![\d\-])(\d{3})(\d{2})(\d{4})(?![\d]|-\d)", "g");
    let cue = re!(r"\b(?:ssn|social security(?: number| no\.?)?|soc\.? sec\.?(?: no\.?)?)\s*(?:#|no\.?|number)?\s*[:#]?\s*$", "i");
    let mut out = spans_from_regex(text, printed, EntityType::UsSsn, |c| {
        let (s, e) = whole(c);
        let letter_before = text[..s].chars().next_back().map_or(false, |ch| test(re!(r"^\p{L}$", "u"), ch.encode_utf8(&mut [0; 4])));
        (is_valid_ssn(g(c, 1), g(c, 3), g(c, 4))
            && !follows_non_personal_label(text, s)
            && ctx.whole_value_kind_at(s, e) != Some(FieldKind::Reference)
            && !letter_before)
            .then_some((s, e))
    });
    out.extend(spans_from_regex(text, bare, EntityType::UsSsn, |c| {
        let (s, e) = whole(c);
        (is_valid_ssn(g(c, 1), g(c, 2), g(c, 3)) && (test(cue, text_before(text, s, 40)) || ctx.field_kind_at(s, s + 9) == Some(FieldKind::Ssn)))
            .then_some((s, e))
    }));
    out
}

pub fn uk_nino(ctx: &Ctx<'_>) -> Vec<Span> {
    let re = re!(r"(?<![\p{L}\p{N}])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?![\p{L}\p{N}])", "gu");
    spans_from_regex(ctx.text, re, EntityType::UkNino, |c| {
        // A serial, part or order number shaped like a NINO ("serial ZM452778C") is a reference.
        if ["BG", "GB", "KN", "NK", "NT", "TN", "ZZ"].contains(&g(c, 1)) || follows_non_personal_label(ctx.text, whole(c).0) {
            return None;
        }
        let m0 = g(c, 0);
        let letters_removed: String = m0.chars().filter(|ch| !ch.is_ascii_uppercase()).collect();
        let spaced = letters_removed.split(' ').count();
        let block = test(re!(r" \d{6} [A-D]$"), m0);
        if spaced != 1 && spaced != 5 && !block {
            return None;
        }
        Some(whole(c))
    })
}

pub fn is_valid_es_dni(value: &str) -> bool {
    let v: String = value.to_uppercase().chars().filter(|c| *c != '-' && !super::fields::is_js_space(*c)).collect();
    let Ok(Some(m)) = re!(r"^([XYZ]|\d)(\d{7})([A-Z])$").captures(&v) else { return false };
    let lead = match g(&m, 1) {
        "X" => "0",
        "Y" => "1",
        "Z" => "2",
        d => d,
    };
    let n: u64 = format!("{lead}{}", g(&m, 2)).parse().unwrap_or(0);
    "TRWAGMYFPDXBNJZSQVHLCKE".as_bytes()[(n % 23) as usize] as char == g(&m, 3).chars().next().unwrap_or(' ')
}

pub fn es_dni(ctx: &Ctx<'_>) -> Vec<Span> {
    let re = re!(r"(?<![\p{L}\p{N}])(?:[XYZxyz][\- ]?\d{7}|\d{8})[\- ]?[A-Za-z](?![\p{L}\p{N}])", "gu");
    // An order number that happens to end in its mod-23 letter ("Pedido 12345678Z") is a reference.
    spans_from_regex(ctx.text, re, EntityType::EsDni, |c| (is_valid_es_dni(g(c, 0)) && !follows_non_personal_label(ctx.text, whole(c).0)).then(|| whole(c)))
}

pub fn is_valid_bsn(d: &str) -> bool {
    if d.len() != 9 || !d.bytes().all(|b| b.is_ascii_digit()) || d == "000000000" {
        return false;
    }
    let b = d.as_bytes();
    let mut sum: i64 = (0..8).map(|i| (9 - i as i64) * (b[i] - b'0') as i64).sum();
    sum -= (b[8] - b'0') as i64;
    sum % 11 == 0
}

pub fn nl_bsn(ctx: &Ctx<'_>) -> Vec<Span> {
    let text = ctx.text;
    let re = re!(r"(?<![\p{L}\p{N}.])(\d{4})([. ]?)(\d{2})\2(\d{3})(?![\p{N}]|[.]\d)", "gu");
    let cue = re!(r"\b(?:bsn|burgerservicenummer|burger ?service ?nummer|sofinummer|sofi-nummer|citizen service number)\b[\s-]*(?:nr\.?|nummer|number|no\.?|is|:)?\s*[:#]?\s*$", "i");
    spans_from_regex(text, re, EntityType::NlBsn, |c| {
        let (s, e) = whole(c);
        let valid = is_valid_bsn(&format!("{}{}{}", g(c, 1), g(c, 3), g(c, 4)));
        (valid
            && (g(c, 2) == "."
                || test(cue, text_before(text, s, 50))
                || mentioned_before(FieldKind::Bsn, text, s, 50)
                || ctx.field_kind_at(s, e) == Some(FieldKind::Bsn)))
            .then_some((s, e))
    })
}

// ---- Other national identifiers ----

fn digits_of(s: &str) -> Vec<u32> {
    s.bytes().filter(u8::is_ascii_digit).map(|b| (b - b'0') as u32).collect()
}

fn num_of(d: &[u32]) -> u64 {
    d.iter().fold(0u64, |a, x| a * 10 + *x as u64)
}

fn is_date(mm: u32, dd: u32) -> bool {
    (1..=12).contains(&mm) && (1..=31).contains(&dd)
}

fn valid_ahv(v: &str) -> bool {
    let d = digits_of(v);
    if d.len() != 13 || d[..3] != [7, 5, 6] {
        return false;
    }
    let sum: u32 = (0..12).map(|i| d[i] * if i % 2 == 0 { 1 } else { 3 }).sum();
    (10 - sum % 10) % 10 == d[12]
}

fn valid_belgian(v: &str) -> bool {
    let d = digits_of(v);
    if d.len() != 11 {
        return false;
    }
    let month = num_of(&d[2..4]) % 20;
    if month > 12 || num_of(&d[4..6]) > 31 {
        return false;
    }
    let check = num_of(&d[9..]);
    let nine = num_of(&d[..9]);
    97 - nine % 97 == check || 97 - (2_000_000_000 + nine) % 97 == check
}

fn valid_ppsn(v: &str) -> bool {
    let u = v.to_uppercase();
    let Ok(Some(m)) = re!(r"^(\d{7})([A-W])([A-IW]?)$", "i").captures(&u) else { return false };
    let d = digits_of(g(&m, 1));
    let mut sum: u32 = (0..7).map(|i| d[i] * (8 - i as u32)).sum();
    let second = g(&m, 3);
    if !second.is_empty() {
        sum += (if second == "W" { 0 } else { second.as_bytes()[0] as u32 - 64 }) * 9;
    }
    "WABCDEFGHIJKLMNOPQRSTUV".as_bytes()[(sum % 23) as usize] as char == g(&m, 2).chars().next().unwrap_or(' ')
}

fn valid_steuer_id(v: &str) -> bool {
    let d = digits_of(v);
    if d.len() != 11 || d[0] == 0 {
        return false;
    }
    let mut counts = [0u32; 10];
    for x in &d[..10] {
        counts[*x as usize] += 1;
    }
    let repeated: Vec<u32> = counts.iter().copied().filter(|n| *n > 1).collect();
    if repeated.len() != 1 || repeated[0] > 3 {
        return false;
    }
    let mut product = 10;
    for x in &d[..10] {
        let mut sum = (x + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (sum * 2) % 11;
    }
    (11 - product) % 10 == d[10]
}

const CF_ODD: [u32; 36] = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];

fn valid_codice_fiscale(v: &str) -> bool {
    let u: Vec<u8> = v.to_uppercase().into_bytes();
    if u.len() != 16 {
        return false;
    }
    let mut sum = 0u32;
    for (i, c) in u.iter().take(15).enumerate() {
        let digit = c.is_ascii_digit();
        sum += if i % 2 == 0 {
            let idx = if digit { (c - b'0') as usize } else { (*c as usize).saturating_sub(55) };
            *CF_ODD.get(idx).unwrap_or(&0)
        } else if digit {
            (c - b'0') as u32
        } else {
            (*c as u32).saturating_sub(65)
        };
    }
    (65 + sum % 26) as u8 == u[15]
}

fn valid_pesel(v: &str) -> bool {
    if v.len() != 11 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let d = digits_of(v);
    if !is_date((num_of(&d[2..4]) % 20) as u32, num_of(&d[4..6]) as u32) {
        return false;
    }
    let w = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
    let sum: u32 = (0..10).map(|i| d[i] * w[i]).sum();
    (10 - sum % 10) % 10 == d[10]
}

fn valid_personnummer(v: &str) -> bool {
    let d = digits_of(v);
    let ten = if d.len() == 12 { &d[2..] } else { &d[..] };
    if ten.len() != 10 || !is_date(num_of(&ten[2..4]) as u32, (num_of(&ten[4..6]) % 60) as u32) {
        return false;
    }
    let s: String = ten.iter().map(|x| char::from(b'0' + *x as u8)).collect();
    passes_luhn(&s)
}

fn valid_cpr(v: &str) -> bool {
    let d = digits_of(v);
    d.len() == 10 && is_date(num_of(&d[2..4]) as u32, num_of(&d[0..2]) as u32)
}

fn valid_hetu(v: &str) -> bool {
    let u = v.to_uppercase();
    let Ok(Some(m)) = re!(r"^(\d{6})[-+A-FU-Y](\d{3})([0-9A-Y])$").captures(&u) else { return false };
    let d = digits_of(g(&m, 1));
    if !is_date(num_of(&d[2..4]) as u32, num_of(&d[0..2]) as u32) {
        return false;
    }
    let n: u64 = format!("{}{}", g(&m, 1), g(&m, 2)).parse().unwrap_or(0);
    "0123456789ABCDEFHJKLMNPRSTUVWXY".as_bytes()[(n % 31) as usize] as char == g(&m, 3).chars().next().unwrap_or(' ')
}

struct Scheme {
    kind: FieldKind,
    pattern: fn() -> &'static Regex,
    valid: fn(&str) -> bool,
    stands_alone: fn(&str) -> bool,
}

static SCHEMES: [Scheme; 9] = [
    Scheme { kind: FieldKind::Ahv, pattern: || re!(r"(?<![\p{L}\p{N}.])756([. ]?)\d{4}\1\d{4}\1\d{2}(?![\p{L}\p{N}]|[.]\d)", "gu"), valid: valid_ahv, stands_alone: |v| v.contains('.') },
    Scheme {
        kind: FieldKind::BeNationalNumber,
        pattern: || re!(r"(?<![\p{L}\p{N}.])\d{2}(?:\.\d{2}\.\d{2}-\d{3}\.\d{2}|\d{9})(?![\p{L}\p{N}]|[.\-]\d)", "gu"),
        valid: valid_belgian,
        stands_alone: |v| v.contains('-'),
    },
    Scheme { kind: FieldKind::Ppsn, pattern: || re!(r"(?<![\p{L}\p{N}])\d{7}[A-W][A-IW]?(?![\p{L}\p{N}])", "giu"), valid: valid_ppsn, stands_alone: |_| false },
    Scheme { kind: FieldKind::SteuerId, pattern: || re!(r"(?<![\p{L}\p{N}])[1-9]\d(?: ?\d{3}){3}(?![\p{L}\p{N}])", "gu"), valid: valid_steuer_id, stands_alone: |_| false },
    Scheme {
        kind: FieldKind::CodiceFiscale,
        pattern: || re!(r"(?<![\p{L}\p{N}])[A-Z]{6}\d{2}[A-EHLMPRST]\d{2}[A-Z]\d{3}[A-Z](?![\p{L}\p{N}])", "giu"),
        valid: valid_codice_fiscale,
        stands_alone: |v| v == v.to_uppercase(),
    },
    Scheme { kind: FieldKind::Pesel, pattern: || re!(r"(?<![\p{L}\p{N}])\d{11}(?![\p{L}\p{N}])", "gu"), valid: valid_pesel, stands_alone: |_| false },
    Scheme { kind: FieldKind::Personnummer, pattern: || re!(r"(?<![\p{L}\p{N}])(?:\d{2})?\d{6}[-+]?\d{4}(?![\p{L}\p{N}])", "gu"), valid: valid_personnummer, stands_alone: |_| false },
    Scheme { kind: FieldKind::Cpr, pattern: || re!(r"(?<![\p{L}\p{N}])\d{6}-?\d{4}(?![\p{L}\p{N}])", "gu"), valid: valid_cpr, stands_alone: |_| false },
    Scheme { kind: FieldKind::Hetu, pattern: || re!(r"(?<![\p{L}\p{N}])\d{6}[-+A-FU-Y]\d{3}[0-9A-Y](?![\p{L}\p{N}])", "gu"), valid: valid_hetu, stands_alone: |_| true },
];

pub fn national_id(ctx: &Ctx<'_>) -> Vec<Span> {
    let text = ctx.text;
    let mut spans = Vec::new();
    if !text.bytes().any(|b| b.is_ascii_digit()) {
        return spans;
    }
    for scheme in &SCHEMES {
        for m in (scheme.pattern)().find_iter(text).flatten() {
            let (start, end) = (m.start(), m.end());
            if !(scheme.valid)(m.as_str()) {
                continue;
            }
            let cued = || ctx.field_kind_at(start, end) == Some(scheme.kind) || mentions(scheme.kind, text_before(text, start, 32));
            if (scheme.stands_alone)(m.as_str()) || cued() {
                spans.push(Span::new(start, end, EntityType::NationalId));
            }
        }
    }
    spans
}

// ---- Date of birth ----

const MONTHS: &str = "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|januar|februar|märz|maerz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari|februari|maart|mei|augustus";
const DOB_CUE: &str = r"(?:\bborn(?:\s+on)?|\bd\.?o\.?b\.?|\bdate\s+of\s+birth|\bbirth\s?date|\bbirthday(?:\s+is)?|\bn[ée]e?(?:\s?\(e\))?\s+le|\bgeb\.(?:\s*-?\s*datum|\s+am)?|\bgeb\.?\s+am|\bdate\s+de\s+naissance|\bgeboren(?:\s+am)?|\bgeburtsdatum|\bfecha\s+de\s+nacimiento|\bnacid[oa]\s+el|\bf\.\s*nacimiento|\bfecha\s+nacimiento|\bnaci[óo]\s+el|\bdata\s+(?:di\s+)?nascita|\bnat[oa]\s+il|\bnacque\s+il|\bgeboortedatum|\bgeboren\s+op)";

/// ISO, year-first with slashes, numeric day-month-year (two-digit years too), 14-Mar-1985, day (ordinal, "1er",
/// "14th of") month name year, month name day year.
fn date_src() -> String {
    format!(r"(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}}/\d{{1,2}}/\d{{1,2}}|\d{{1,2}}[./\-]\d{{1,2}}[./\-](?:\d{{4}}|\d{{2}})|\d{{1,2}}-(?:{MONTHS})\.?-(?:\d{{4}}|\d{{2}})|\d{{1,2}}(?:st|nd|rd|th|er)?\.?\s+(?:of\s+|de\s+)?(?:{MONTHS})\.?,?\s+(?:de\s+)?\d{{4}}|(?:{MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})")
}

/// The cue after the date: "wurde am 13. August 1989 in Graz geboren", "is op 3 maart 1980 geboren".
fn dob_cue_after_re() -> &'static Regex {
    static CELL: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| super::jsre::compile(&format!(r"\b(?:am|op)\s+({})(?:\s+(?:in|te|en|à|a)\s+[\p{{L}}\-]+(?:\s+[\p{{L}}\-]+)?)?\s+(?:geboren|born)\b", date_src()), "giu"))
}

/// What was "born" is not always a person: "Le projet est né le 6 mai 2019", "the company was born on ...".
fn non_person_subject_re() -> &'static Regex {
    re!(r"\b(?:project|projet|proyecto|progetto|projekt|idea|idée|idee|company|société|entreprise|empresa|azienda|unternehmen|firma|bedrijf|association|asociación|associazione|verein|vereniging|festival|movement|mouvement|movimiento|movimento|bewegung|beweging|brand|marque|marca|marke|merk|product|produit|producto|prodotto|produkt|startup|start-up|band|groupe|group|grupo|gruppo|gruppe|groep|club|journal|magazine|site|website|app|application|service|concept|programme|program|programa|programma|software|logiciel)\s+(?:(?:est|était|a\s+été|was|is|es|fue|è|era|ist|war|wurde)\s+)?$", "iu")
}

fn dob_re() -> &'static Regex {
    static CELL: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| super::jsre::compile(&format!(r"{DOB_CUE}\s*(?:[:\-–]|is|was|on|am|le|el|il)?\s*(?:the\s+)?({})(?![\p{{L}}\p{{N}}])", date_src()), "giu"))
}

fn date_alone_re() -> &'static Regex {
    static CELL: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| super::jsre::compile(&format!(r"(?<![\p{{L}}\p{{N}}]){}(?![\p{{L}}\p{{N}}])", date_src()), "iu"))
}

fn plausible(date: &str) -> bool {
    let numbers: Vec<u64> = re!(r"\d+", "g").find_iter(date).flatten().filter_map(|m| m.as_str().parse().ok()).collect();
    let year = numbers.iter().copied().find(|n| *n > 31).or(numbers.last().copied());
    matches!(year, Some(y) if y < 100 || (1900..=2100).contains(&y))
}

pub fn date_of_birth(ctx: &Ctx<'_>) -> Vec<Span> {
    let text = ctx.text;
    let mut out = spans_from_regex(text, dob_re(), EntityType::DateOfBirth, |c| {
        let date = g(c, 1);
        let (s0, e) = whole(c);
        if !plausible(date) || test(non_person_subject_re(), text_before(text, s0, 40)) {
            return None;
        }
        let start = e - date.len();
        if g(c, 0).contains('\n') && ctx.field_at(start, e).is_some() && ctx.field_kind_at(start, e) != Some(FieldKind::Dob) {
            return None;
        }
        Some((start, e))
    });
    out.extend(spans_from_regex(text, dob_cue_after_re(), EntityType::DateOfBirth, |c| {
        let date = g(c, 1);
        let all = g(c, 0);
        if !plausible(date) || all.contains('\n') {
            return None;
        }
        let start = whole(c).0 + 2 + all[2..].find(date)?;
        Some((start, start + date.len()))
    }));
    for f in ctx.fields_of_kind(FieldKind::Dob) {
        if let Ok(Some(m)) = date_alone_re().find(&text[f.start..f.end]) {
            if plausible(m.as_str()) {
                out.push(Span::new(f.start + m.start(), f.start + m.end(), EntityType::DateOfBirth));
            }
        }
    }
    out
}

// ---- Passport ----

pub fn passport(ctx: &Ctx<'_>) -> Vec<Span> {
    let text = ctx.text;
    let acceptable = |v: &str| v.bytes().any(|b| b.is_ascii_digit()) && v == v.to_uppercase();
    let cue_re = re!(r"(?:\b(?:n[º°o]\.?\s*(?:de\s+)?)?(?:passport|passeport|reisepass|pass|pasaporte|passaporto|passaporte|paspoort)(?:nummer|nr\.?|nummer)?(?:\s*-?\s*(?:no\.?|nr\.?|number|num\.?|n[º°o.]\.?|#|nummer|número|numéro|numero|id))?\s*(?:[:#]|is|lautet)?\s*)([A-Z0-9]{6,9})(?![\p{L}\p{N}])", "giu");
    let cue_word = re!(r"(?:passport|passeport|reisepass|pasaporte|passaporto|passaporte|paspoort|pass-?(?:nr|nummer))", "i");
    let token = re!(r"(?<![\p{L}\p{N}])[A-Z0-9]{6,9}(?![\p{L}\p{N}])", "u");
    let mut out = spans_from_regex(text, cue_re, EntityType::Passport, |c| {
        let value = g(c, 1);
        if !acceptable(value) || !test(cue_word, g(c, 0)) {
            return None;
        }
        let (_, e) = whole(c);
        Some((e - value.len(), e))
    });
    if super::jsre::test(re!(r"passport|passeport|reisepass|pass[ _-]?(?:nr|nummer)|pasaporte|passaporto|passaporte|paspoort", "i"), text) {
        out.extend(spans_from_regex(text, token, EntityType::Passport, |c| {
            let (s, e) = whole(c);
            (acceptable(g(c, 0)) && mentioned_before(FieldKind::Passport, text, s, 50)).then_some((s, e))
        }));
    }
    for f in ctx.fields_of_kind(FieldKind::Passport) {
        if let Ok(Some(m)) = token.find(&text[f.start..f.end]) {
            if acceptable(m.as_str()) {
                out.push(Span::new(f.start + m.start(), f.start + m.end(), EntityType::Passport));
            }
        }
    }
    out
}

// ---- Crypto wallets ----

fn bech32_valid(address: &str) -> bool {
    const CHARSET: &str = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    const GEN: [u32; 5] = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
    if address != address.to_lowercase() && address != address.to_uppercase() {
        return false;
    }
    let a = address.to_lowercase();
    let Some(sep) = a.rfind('1') else { return false };
    if sep < 1 || sep + 7 > a.len() {
        return false;
    }
    let hrp = &a[..sep];
    let mut values: Vec<u32> = hrp.bytes().map(|c| (c >> 5) as u32).collect();
    values.push(0);
    values.extend(hrp.bytes().map(|c| (c & 31) as u32));
    for c in a[sep + 1..].chars() {
        match CHARSET.find(c) {
            Some(v) => values.push(v as u32),
            None => return false,
        }
    }
    let mut chk: u32 = 1;
    for v in values {
        let top = chk >> 25;
        chk = ((chk & 0x1ffffff) << 5) ^ v;
        for (i, gen) in GEN.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= gen;
            }
        }
    }
    chk == 1 || chk == 0x2bc830a3
}

pub fn crypto_wallet(ctx: &Ctx<'_>) -> Vec<Span> {
    let re = re!(r"(?<![\p{L}\p{N}])(?:(?:bc1|BC1)[02-9ac-hj-np-zAC-HJ-NP-Z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34}|0x[0-9a-fA-F]{40})(?![\p{L}\p{N}])", "gu");
    spans_from_regex(ctx.text, re, EntityType::CryptoWallet, |c| {
        let v = g(c, 0);
        if v.len() >= 3 && v[..3].eq_ignore_ascii_case("bc1") && !bech32_valid(v) {
            return None;
        }
        if v.starts_with('1') || v.starts_with('3') {
            let body = &v[1..];
            let lower = body.bytes().filter(u8::is_ascii_lowercase).count();
            let upper = body.bytes().filter(u8::is_ascii_uppercase).count();
            let digits = body.bytes().filter(u8::is_ascii_digit).count();
            if !(lower > 0 && upper > 0 && (digits >= 2 || (upper >= 6 && lower >= 6))) {
                return None;
            }
        }
        Some(whole(c))
    })
}

// ---- IP addresses ----

pub fn is_valid_ipv6(value: &str) -> bool {
    let mut head = value.to_string();
    let mut available = 8;
    if let Ok(Some(v4)) = re!(r"^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$").captures(value) {
        if !(2..=5).all(|i| is_octet(g(&v4, i))) {
            return false;
        }
        let h = g(&v4, 1);
        head = if h.ends_with("::") { h.to_string() } else { h[..h.len() - 1].to_string() };
        available = 6;
    }
    let halves: Vec<&str> = head.split("::").collect();
    if halves.len() > 2 {
        return false;
    }
    let parse = |part: &str| -> Option<usize> {
        if part.is_empty() {
            return Some(0);
        }
        let groups: Vec<&str> = part.split(':').collect();
        groups.iter().all(|g| (1..=4).contains(&g.len()) && g.bytes().all(|b| b.is_ascii_hexdigit())).then_some(groups.len())
    };
    if halves.len() == 1 {
        return parse(halves[0]) == Some(available);
    }
    match (parse(halves[0]), parse(halves[1])) {
        (Some(l), Some(r)) => l + r < available,
        _ => false,
    }
}

/// A network word: an address in the same line is announced by it (IPv4, and short IPv6 forms).
fn network_cue() -> &'static Regex {
    re!(r"\b(?:ip|ipv4|ipv6|inet|inet6|loopback|localhost|ips|address|addresses|addr|host|hosts|hostname|server|servers|client|peer|from|to|connect|connected|connection|login|logged|access|log|logs|firewall|blocked|block|ban|banned|allow|allowlist|whitelist|blacklist|denylist|gateway|router|dns|resolver|nameserver|proxy|vpn|subnet|netmask|route|ping|ssh|telnet|listen|bind|nat|lan|wan|remote|source|destination|src|dst|forwarded|upstream|downstream|endpoint|url|uri|adresse|adresa|dirección|direccion|indirizzo|ip-adresse|attacker|vanaf|vandaan|depuis|desde|von|aus|connexion|anmeldung|zugriff|acceso|conexión|conexion|inlog|inlogpoging|inlogpogingen|inloggen|verbinding|verbindingen|aanmelding|aanmeldingen|anmeldungen|anmeldeversuche|zugriffe|connexions|conexiones|accesos|accessi|accesso|pare-feu|cortafuegos)\b", "i")
}

/// Up to 80 characters before and 40 after, within the line.
fn line_around(text: &str, start: usize, end: usize) -> (&str, &str) {
    let before_all = &text[super::text::back(text, start, 80)..start];
    let before = &before_all[before_all.rfind('\n').map_or(0, |i| i + 1)..];
    let after_all = &text[end..super::text::forward(text, end, 40)];
    let after = &after_all[..after_all.find('\n').unwrap_or(after_all.len())];
    (before, after)
}

/// A compressed address with fewer than three groups written ("::2", "1::3") is also how code writes slices and
/// scopes: it counts only where an address is announced (ip field, network word in the line, URL host, port/prefix/zone).
/// Longer addresses and any with an IPv4 tail are taken anywhere.
fn ipv6_announced_if_short(ctx: &Ctx<'_>, start: usize, end: usize) -> bool {
    let value = &ctx.text[start..end];
    let written = value.split(':').filter(|g| (1..=4).contains(&g.len()) && g.bytes().all(|b| b.is_ascii_hexdigit())).count();
    if value.contains('.') || written >= 3 {
        return true;
    }
    if ctx.field_kind_at(start, end) == Some(FieldKind::Ip) {
        return true;
    }
    let (before, after) = line_around(ctx.text, start, end);
    test(network_cue(), before)
        || test(network_cue(), after)
        || test(re!(r":\/\/(?:[^\s@\/]*@)?\[$"), before)
        || test(re!(r"^(?:\]:\d{1,5}\b|\/\d{1,3}\b|%[\p{L}\p{N}]+)", "u"), after)
}

pub fn ipv6(ctx: &Ctx<'_>) -> Vec<Span> {
    if !ctx.text.contains(':') {
        return Vec::new();
    }
    let re = re!(r"(?<![\p{L}\p{N}:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})(?![\p{L}\p{N}:]|\.\d)", "gu");
    spans_from_regex(ctx.text, re, EntityType::Ipv6, |c| {
        let v = g(c, 0);
        let (start, end) = whole(c);
        (is_valid_ipv6(v) && v.bytes().any(|b| b.is_ascii_hexdigit()) && ipv6_announced_if_short(ctx, start, end)).then_some((start, end))
    })
}

fn is_octet(s: &str) -> bool {
    (s == "0" || !s.starts_with('0')) && s.parse::<u32>().map_or(false, |n| n <= 255)
}

/// A network range in CIDR notation: "/prefix" (0 to 31) right after an address whose host bits are all zero
/// ("192.168.0.0/16"). It names a network, no one's device; an address with host bits set ("inet 10.0.0.5/24") is
/// still one.
fn is_network_range(parts: &[&str], text: &str, end: usize) -> bool {
    let after = text[end..].as_bytes();
    if after.first() != Some(&b'/') {
        return false;
    }
    let digits = after[1..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 2 {
        return false;
    }
    let prefix: u32 = std::str::from_utf8(&after[1..1 + digits]).unwrap_or("99").parse().unwrap_or(99);
    if prefix > 31 {
        return false;
    }
    let address = parts.iter().fold(0u64, |value, part| value * 256 + part.parse::<u64>().unwrap_or(0));
    address % (1u64 << (32 - prefix)) == 0
}

pub fn ipv4(ctx: &Ctx<'_>) -> Vec<Span> {
    let text = ctx.text;
    let re = re!(r"(?<![\p{L}\p{N}._\-])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\p{L}\p{N}_]|\.\d|-[A-Za-z])", "gu");
    let upgrade = re!(r"\b(?:upgrad|updat|downgrad|migrat|bump|aktualisier|mis à jour|actualiz|bijgewerkt)\w*\b[^\n\d]{0,20}(?:\d[\w.\-]*[^\n\d]{1,12})?(?:from|to|von|auf|de|à|a|naar|van)\s*$", "i");
    let version = re!(r"(?:\b(?:v|ver|version|versión|versione|release|build|firmware|fw|rev|revision|update|patch|sdk|api|kb|chrome|firefox|edge|windows|ios|android|macos)\.?\s*[:=]?\s*|\bv)$", "i");
    let network = network_cue();
    spans_from_regex(text, re, EntityType::Ipv4, |c| {
        let (start, end) = whole(c);
        let parts = [g(c, 1), g(c, 2), g(c, 3), g(c, 4)];
        if !parts.iter().all(|p| is_octet(p)) {
            return None;
        }
        if is_network_range(&parts, text, end) {
            return None;
        }
        let kind = ctx.field_kind_at(start, end);
        if kind == Some(FieldKind::Ip) {
            return Some((start, end));
        }
        if ctx.whole_value_kind_at(start, end) == Some(FieldKind::Reference) {
            return None;
        }
        let looks_like_version = parts[0].parse::<u32>().unwrap_or(0) < 10 && parts.iter().all(|p| p.parse::<u32>().unwrap_or(0) < 100);
        if kind == Some(FieldKind::Version) && looks_like_version {
            return None;
        }
        if test(version, text_before(text, start, 30)) || test(upgrade, text_before(text, start, 60)) {
            return None;
        }
        let (before, after) = line_around(text, start, end);
        let announced = test(network, before)
            || test(network, after)
            || test(re!(r"^(?::\d{1,5}\b|\/\d{1,2}\b)"), after)
            // A URL's host: "https://10.0.0.5/admin", "ssh://deploy@10.0.0.5".
            || test(re!(r":\/\/(?:[^\s@\/]*@)?$"), before)
            // A log line's timestamp and nothing else before it, for a number that does not look like a version.
            || (test(re!(r"^\s*[\[(]?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)[\])]?\s*$"), before)
                && !looks_like_version)
            || text_before(text, start, 200).trim_matches(super::fields::is_js_space).is_empty();
        announced.then_some((start, end))
    })
}

/// `u16len` re-exported for detectors that compare lengths like the TypeScript engine.
pub fn len16(s: &str) -> usize {
    u16len(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `prefix` followed by zeros and the Luhn check digit, `len` digits in all.
    fn luhn_number(prefix: &str, len: usize) -> String {
        let body = format!("{prefix}{}", "0".repeat(len - 1 - prefix.len()));
        let check = (0..10).find(|d| passes_luhn(&format!("{body}{d}"))).unwrap();
        format!("{body}{check}")
    }

    fn cards(text: &str) -> Vec<(usize, usize)> {
        card(&Ctx::new(text)).iter().map(|s| (s.start, s.end)).collect()
    }

    #[test]
    fn a_lead_digit_outside_2_to_6_is_not_a_card_and_a_luhn_valid_4_is() {
        let visa = luhn_number("4", 16);
        assert_eq!(cards(&format!("card {visa} today")), vec![(5, 21)]);
        for lead in ["0", "1", "7", "8", "9"] {
            let number = luhn_number(lead, 16);
            assert!(passes_luhn(&number));
            assert_eq!(cards(&format!("card {number} today")), vec![], "{number}");
        }
    }

    #[test]
    fn no_scheme_starts_with_a_digit_outside_2_to_6_so_the_skip_drops_no_card() {
        // What the skip relies on: card_scheme has no issuer range for these first digits, at any length or prefix.
        for lead in ['0', '1', '7', '8', '9'] {
            for len in 13..=19 {
                for second in 0..=99 {
                    let number = format!("{lead}{second:02}{}", "0".repeat(len - 3));
                    assert_eq!(card_scheme(&number), None, "{number}");
                }
            }
        }
    }
}
