//! IBANs: country code, check digits, the BBAN contiguous or in printed groups of four, validated like the
//! TypeScript engine's validator (ibantools: country length and BBAN format, the national BBAN checks, mod 97).
//! The country table is the one generated file the Python engine reads (read here at build time).

use super::fields::Ctx;
use super::types::{EntityType, Span};
use crate::re;
use super::jsre::Regex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;

const COUNTRIES_JSON: &str = include_str!("../../../python/src/privacy_relay/tokeniser/data/iban_countries.json");

struct Spec {
    chars: usize,
    bban: Regex,
    check: Option<String>,
}

fn countries() -> &'static HashMap<String, Spec> {
    static CELL: OnceLock<HashMap<String, Spec>> = OnceLock::new();
    CELL.get_or_init(|| {
        let v: Value = serde_json::from_str(COUNTRIES_JSON).expect("iban_countries.json");
        v["countries"]
            .as_object()
            .expect("countries")
            .iter()
            .map(|(code, spec)| {
                let s = Spec {
                    chars: spec["chars"].as_u64().unwrap_or(0) as usize,
                    bban: super::jsre::compile(spec["bban_regexp"].as_str().unwrap_or("^$"), ""),
                    check: spec["bban_check"].as_str().map(str::to_string),
                };
                (code.clone(), s)
            })
            .collect()
    })
}

pub fn electronic_format(iban: &str) -> String {
    iban.chars().filter(|c| *c != '-' && *c != ' ').collect::<String>().to_uppercase()
}

fn int(c: Option<u8>) -> i64 {
    match c {
        Some(b) if b.is_ascii_digit() => (b - b'0') as i64,
        _ => -1,
    }
}

fn digit_at(s: &[u8], i: usize) -> i64 {
    int(s.get(i).copied())
}

fn mod9710(s: &str) -> i64 {
    let mut s = s.to_string();
    while s.len() > 2 {
        let take = s.len().min(6);
        let part = &s[..take];
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            return -1;
        }
        let r = part.parse::<u64>().unwrap_or(0) % 97;
        s = format!("{r}{}", &s[take..]);
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        (s.parse::<u64>().unwrap_or(0) % 97) as i64
    } else {
        -1
    }
}

fn strip(b: &str) -> String {
    b.chars().filter(|c| !c.is_whitespace() && *c != '.').collect()
}

fn mod11_control(r: i64) -> i64 {
    match r {
        0 => 0,
        1 => 1,
        r => 11 - r,
    }
}

fn mod1110(to_check: &[u8], control: i64) -> bool {
    let mut nr: i64 = 10;
    for c in to_check {
        nr += int(Some(*c));
        if nr % 10 != 0 {
            nr %= 10;
        }
        nr = nr * 2 % 11;
    }
    control == if 11 - nr == 10 { 0 } else { 11 - nr }
}

fn bban_check(name: &str, bban: &str) -> bool {
    let b = strip(bban);
    let s = b.as_bytes();
    let get = |i: usize| digit_at(s, i);
    let weighted = |from: usize, weights: &[i64]| -> i64 { weights.iter().enumerate().map(|(i, w)| digit_at(s, from + i) * w).sum() };
    match name {
        "checkNorwayBBAN" => {
            let r = weighted(0, &[5, 4, 3, 2, 7, 6, 5, 4, 3, 2]) % 11;
            get(10) == if r == 0 { 0 } else { 11 - r }
        }
        "checkBelgianBBAN" => {
            if s.len() < 3 {
                return false;
            }
            let checking: u64 = b[..b.len() - 2].parse().unwrap_or(0);
            let r = if checking % 97 == 0 { 97 } else { checking % 97 };
            b[b.len() - 2..].parse::<u64>().map_or(false, |x| x == r)
        }
        "checkMod9710BBAN" => mod9710(&b) == 1,
        "checkPolandBBAN" => {
            let r = weighted(0, &[3, 9, 7, 1, 3, 9, 7]) % 10;
            get(7) == if r == 0 { 0 } else { 10 - r }
        }
        "checkSpainBBAN" => {
            let wb = [4, 8, 5, 10, 9, 7, 3, 6];
            let wa = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6];
            if get(8) != mod11_control(weighted(0, &wb) % 11) {
                return false;
            }
            get(9) == mod11_control(weighted(10, &wa) % 11)
        }
        "checkCroatianBBAN" => s.len() >= 17 && mod1110(&s[0..6], get(6)) && mod1110(&s[7..16], get(16)),
        "checkCzechAndSlovakBBAN" => {
            let wp = [10, 5, 8, 4, 2, 1];
            let ws = [6, 3, 7, 9, 10, 5, 8, 4, 2, 1];
            let prefix: i64 = (4..9).enumerate().map(|(i, k)| digit_at(s, k) * wp[i]).sum();
            if get(9) != mod11_control(prefix % 11) {
                return false;
            }
            let suffix: i64 = (10..19).enumerate().map(|(i, k)| digit_at(s, k) * ws[i]).sum();
            get(19) == mod11_control(suffix % 11)
        }
        "checkEstonianBBAN" => {
            let r = weighted(2, &[7, 1, 3, 7, 1, 3, 7, 1, 3, 7, 1, 3, 7]) % 10;
            get(15) == if r == 0 { 0 } else { 10 - r }
        }
        "checkFrenchBBAN" => {
            const LETTERS: [&str; 10] = ["", "AJ", "BKS", "CLT", "DMU", "ENV", "FOW", "GPX", "HQY", "IRZ"];
            let mapped: String = b
                .chars()
                .map(|c| {
                    if (c as u32) >= 65 {
                        LETTERS.iter().position(|l| l.contains(c)).map_or(c, |d| char::from(b'0' + d as u8))
                    } else {
                        c
                    }
                })
                .collect();
            mod9710(&mapped) == 0
        }
        "checkHungarianBBAN" => {
            let w = [9, 7, 3, 1, 9, 7, 3, 1, 9, 7, 3, 1, 9, 7, 3];
            let r = weighted(0, &w[..7]) % 10;
            if get(7) != if r == 0 { 0 } else { 10 - r } {
                return false;
            }
            let (from, len, control) = if b.ends_with("00000000") { (8, 7, get(15)) } else { (8, 15, get(23)) };
            let r = (0..len).map(|i| digit_at(s, from + i) * w[i]).sum::<i64>() % 10;
            control == if r == 0 { 0 } else { 10 - r }
        }
        _ => true,
    }
}

fn checksum_ok(iban: &str) -> bool {
    let rearranged = format!("{}{}00", &iban[4..], &iban[..2]);
    let digits: String = rearranged
        .chars()
        .map(|c| if (c as u32) >= 65 { ((c as u32) - 55).to_string() } else { c.to_string() })
        .collect();
    let rest = mod9710(&digits);
    rest >= 0 && iban[2..4].bytes().all(|b| b.is_ascii_digit()) && 98 - rest == iban[2..4].parse::<i64>().unwrap_or(-1)
}

/// ISO 13616 in electronic format: the country's length and BBAN format, its national check, mod 97.
pub fn is_valid_iban(iban: &str) -> bool {
    if !iban.is_ascii() || iban.len() < 4 {
        return false;
    }
    let Some(spec) = countries().get(&iban[..2]) else { return false };
    if spec.chars != iban.len() || !iban[2..4].bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let bban = &iban[4..];
    if !super::jsre::test(&spec.bban, bban) {
        return false;
    }
    if let Some(check) = &spec.check {
        if !bban_check(check, bban) {
            return false;
        }
    }
    checksum_ok(iban)
}

fn candidate_re() -> &'static Regex {
    re!(r"(?<![\p{L}\p{N}])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){3,9}(?![\p{L}\p{N}])", "gu")
}

fn may_hold_iban(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(4).any(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_alphabetic() && w[2].is_ascii_digit() && w[3].is_ascii_digit())
}

pub fn iban(ctx: &Ctx<'_>) -> Vec<Span> {
    let text = ctx.text;
    let mut spans = Vec::new();
    if !may_hold_iban(text) {
        return spans;
    }
    let mut pos = 0;
    while pos <= text.len() {
        let Ok(Some(m)) = candidate_re().find_from_pos(text, pos) else { break };
        let start = m.start();
        let mut candidate = m.as_str();
        let mut found: Option<usize> = None;
        while candidate.len() >= 15 {
            if is_valid_iban(&electronic_format(candidate)) {
                found = Some(start + candidate.len());
                spans.push(Span::new(start, start + candidate.len(), EntityType::Iban));
                break;
            }
            match candidate.rfind(' ') {
                Some(cut) if cut > 4 => candidate = &candidate[..cut],
                _ => break,
            }
        }
        pos = found.unwrap_or_else(|| start + text[start..].chars().next().map_or(1, char::len_utf8));
    }
    spans
}

/// Runs shaped exactly like an IBAN of a known country that fail its check: not IBANs, but their digit groups
/// are not phones or cards either, so the caller consumes these ranges.
pub fn rejected_iban_runs(text: &str) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    if !may_hold_iban(text) {
        return runs;
    }
    let grouped = re!(r"^(?:\S+|\S{4}(?: \S{4})*(?: \S{1,4})?)$");
    for m in candidate_re().find_iter(text).flatten() {
        let length = countries().get(&m.as_str()[..2].to_uppercase()).map(|s| s.chars);
        let mut candidate = m.as_str();
        loop {
            let electronic = electronic_format(candidate);
            if Some(electronic.len()) == length && super::jsre::test(grouped, candidate) {
                if !is_valid_iban(&electronic) {
                    runs.push((m.start(), m.start() + candidate.len()));
                }
                break;
            }
            match candidate.rfind(' ') {
                Some(cut) if cut > 4 => candidate = &candidate[..cut],
                _ => break,
            }
        }
    }
    runs
}
