//! Person names by rules and gazetteers (the TypeScript engine's names/nameRules.ts): given names and surnames
//! of many locales, titles and labelled fields in English, French, German, Spanish and Dutch, and negative lists.
//! The gazetteer is the one generated file the Python engine reads (data/gazetteer.json, generated from the
//! TypeScript engine's gazetteer.generated.ts), read here at build time.

use super::fields::{mentions, Ctx, FieldKind};
use super::jsre::test;
use super::text::{back, forward};
use super::types::{EntityType, Span};
use crate::re;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::OnceLock;

const GAZETTEER_JSON: &str = include_str!("../../../python/src/privacy_relay/tokeniser/data/gazetteer.json");

struct Sets {
    given: HashSet<String>,
    surname: HashSet<String>,
    place: HashSet<String>,
    calendar: HashSet<String>,
    titles: HashSet<&'static str>,
    greetings: HashSet<&'static str>,
    particles: HashSet<&'static str>,
    stop: HashSet<&'static str>,
    articles: HashSet<&'static str>,
    place_prefixes: HashSet<&'static str>,
}

fn sets() -> &'static Sets {
    static CELL: OnceLock<Sets> = OnceLock::new();
    CELL.get_or_init(|| {
        let v: Value = serde_json::from_str(GAZETTEER_JSON).expect("gazetteer.json");
        let list = |k: &str| -> HashSet<String> {
            v[k].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
        };
        let words = |s: &'static str| -> HashSet<&'static str> { s.split(' ').collect() };
        Sets {
            given: list("GIVEN_NAMES"),
            surname: list("SURNAMES"),
            place: list("PLACE_WORDS"),
            calendar: list("CALENDAR_WORDS"),
            titles: words("mr mrs ms mx dr prof sir dame m mme mlle monsieur madame mademoiselle herr herrn frau fräulein señor señora señorita sr sra srta don doña dra dña meneer mevrouw mevr dhr mw heer signor signora sig"),
            greetings: words("hi hello hey dear thanks thank cheers bye bonjour salut cher chère coucou merci hallo liebe lieber danke servus grüße gruß hola querida querido estimado estimada gracias saludos hoi beste dag bedankt groeten groet ciao cara caro grazie"),
            particles: words("van der den de del della la le du des von vom zu ten ter te da di dos das y bin ibn al st"),
            stop: words(concat!(
                "the this that these those and or but if in on at for from to with by of as is are was be it its he she we they you your our my his her their ",
                "subject re fwd fw from to cc date sent best kind regards sincerely yours team support customer client patient name ",
                "le la les un une des et ou mais pour avec dans sur par bonjour madame monsieur merci cordialement ",
                "der die das ein eine und oder aber mit von für auf bei grüße viele beste freundlichen ",
                "el los las una y o pero con para por en saludos un ",
                "het een en maar met voor op bij groeten vriendelijke ",
                "sir madam ford dell philips siemens bosch porsche renault heineken zara carrefour ferrari chanel disney boeing google apple amazon microsoft tesla ",
                "ville stadt ort ciudad plaats nom naam nombre prénom vorname nachname apellidos voornaam achternaam titulaire kunde klant cliente sie ihr ich du wir usted vous nous ik wij jij"
            )),
            articles: words("the a an la le les der die das el los las het een"),
            place_prefixes: words("san santa santo saint sainte st sankt são sao den los las"),
        }
    })
}

/// The gazetteer's sizes (given names, surnames, place words, calendar words), for engine_info.
pub fn gazetteer_sizes() -> [usize; 4] {
    let s = sets();
    [s.given.len(), s.surname.len(), s.place.len(), s.calendar.len()]
}

#[derive(Clone, Copy)]
struct Word<'t> {
    text: &'t str,
    start: usize,
    end: usize,
}

fn words_of(text: &str) -> Vec<Word<'_>> {
    re!(r"[\p{L}\p{M}](?:[\p{L}\p{M}'’\-]*[\p{L}\p{M}])?", "gu")
        .find_iter(text)
        .flatten()
        .map(|m| Word { text: m.as_str(), start: m.start(), end: m.end() })
        .collect()
}

fn is_capitalised(w: &str) -> bool {
    let mut it = w.chars();
    let (a, b, c, d) = (it.next(), it.next(), it.next(), it.next());
    let up = |c: Option<char>| c.map_or(false, is_lu);
    let low = |c: Option<char>| c.map_or(false, is_ll);
    (up(a) && low(b)) || (up(a) && matches!(b, Some('\'') | Some('’')) && up(c) && low(d))
}

fn is_lu(c: char) -> bool {
    c.is_uppercase() && test(re!(r"^\p{Lu}$", "u"), c.encode_utf8(&mut [0; 4]))
}

fn is_ll(c: char) -> bool {
    c.is_lowercase() && test(re!(r"^\p{Ll}$", "u"), c.encode_utf8(&mut [0; 4]))
}

fn base(w: &str) -> &str {
    w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(w)
}

fn lower(w: &str) -> String {
    w.to_lowercase()
}

fn is_given(w: &str) -> bool {
    let s = sets();
    s.given.contains(w) || w.split('-').all(|p| s.given.contains(p))
}

fn is_surname(w: &str) -> bool {
    let s = sets();
    s.surname.contains(w) || w.split('-').all(|p| s.surname.contains(p) || s.given.contains(p))
}

fn name_like(w: &str) -> bool {
    let s = sets();
    let l = lower(w);
    is_capitalised(w)
        && !s.stop.contains(l.as_str())
        && !s.greetings.contains(l.as_str())
        && !s.calendar.contains(&l)
        && !s.titles.contains(l.strip_suffix('.').unwrap_or(&l))
        && !s.place_prefixes.contains(l.as_str())
}

fn joined(text: &str, a: &Word<'_>, b: &Word<'_>) -> bool {
    b.start == a.end + 1 && text.as_bytes()[a.end] == b' '
}

fn extend(text: &str, words: &[Word<'_>], i: usize, limit: usize) -> usize {
    let s = sets();
    let mut last = i;
    let mut j = i + 1;
    while j < words.len() && j - i <= limit + 2 && joined(text, &words[j - 1], &words[j]) {
        let w = words[j].text;
        if name_like(w) && !s.place.contains(w) {
            last = j;
            j += 1;
            continue;
        }
        if s.particles.contains(lower(w).as_str()) && !is_capitalised(w) {
            j += 1;
            continue;
        }
        break;
    }
    last
}

fn span(words: &[Word<'_>], from: usize, to: usize) -> Span {
    let last = &words[to];
    Span::new(words[from].start, last.end - (last.text.len() - base(last.text).len()), EntityType::Person)
}

fn line_head(text: &str, index: usize) -> &str {
    let from = back(text, index, 40);
    let before = &text[from..index];
    match before.rfind('\n') {
        None if from > 0 => "?",
        None => before,
        Some(nl) => &before[nl + 1..],
    }
}

fn line_tail(text: &str, index: usize) -> &str {
    let after = &text[index..forward(text, index, 40)];
    &after[..after.find('\n').unwrap_or(after.len())]
}

fn names_in_prose(text: &str) -> Vec<Span> {
    let s = sets();
    let words = words_of(text);
    let mut spans = Vec::new();
    let name_cue = re!(r"(?:\b(?:on behalf of|account holder|holder|a nombre de|en nombre de|au nom de|de la part de|im namen von|namens|t\.n\.v\.|ten name van|kontoinhaber(?:in)?|titular|titulaire|signed by|firmado por|sign[ée] par|unterzeichnet von|groeten van|groet van|greetings from|grüße von|grüßen von|saludos de|amitiés de)\s*:?\s*)$", "iu");
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let previous = if i > 0 && words[i - 1].end + 2 >= w.start { Some(words[i - 1]) } else { None };
        let prev_lower = previous.map_or(String::new(), |p| lower(p.text));
        let prev_title = s.titles.contains(prev_lower.strip_suffix('.').unwrap_or(&prev_lower));
        let between_is_dots = |p: &Word<'_>| text[p.end..w.start].chars().all(|c| c == '.' || super::fields::is_js_space(c));
        if let Some(p) = previous {
            if prev_title && s.particles.contains(lower(w.text).as_str()) && between_is_dots(&p) {
                let mut j = i;
                while j + 1 < words.len() && s.particles.contains(lower(words[j].text).as_str()) && joined(text, &words[j], &words[j + 1]) {
                    j += 1;
                }
                if j > i && name_like(words[j].text) {
                    let last = extend(text, &words, j, 4);
                    spans.push(span(&words, i, last));
                    i = last + 1;
                    continue;
                }
            }
        }
        if !name_like(w.text) {
            i += 1;
            continue;
        }
        if let Some(p) = previous {
            if s.titles.contains(prev_lower.as_str()) && between_is_dots(&p) && !s.calendar.contains(&lower(w.text)) {
                let last = extend(text, &words, i, 4);
                spans.push(span(&words, i, last));
                i = last + 1;
                continue;
            }
        }
        if previous.is_some() && s.articles.contains(prev_lower.as_str()) {
            i += 1;
            continue;
        }
        if test(name_cue, &text[back(text, w.start, 30)..w.start]) {
            let last = extend(text, &words, i, 4);
            spans.push(span(&words, i, last));
            i = last + 1;
            continue;
        }
        let next = words.get(i + 1);
        let before_surname = next.map_or(false, |n| {
            joined(text, &w, n) && is_capitalised(n.text) && s.surname.contains(base(n.text)) && !s.given.contains(base(n.text)) && !s.place.contains(w.text)
        });
        let given = is_given(base(w.text));
        let last = if given || before_surname { extend(text, &words, i, 4) } else { i };
        if last > i {
            if s.place.contains(w.text) && !is_surname(base(words[i + 1].text)) {
                i += 1;
                continue;
            }
            spans.push(span(&words, i, last));
            i = last + 1;
            continue;
        }
        if s.place.contains(w.text) {
            i += 1;
            continue;
        }
        let head = line_head(text, w.start);
        let tail = line_tail(text, w.end);
        let greeted = previous.is_some() && s.greetings.contains(prev_lower.as_str());
        let speaker = test(re!(r"^\s*\[[\d:]+\]\s*$"), head) && test(re!(r"^\s*:"), tail);
        if !given && !greeted && !speaker {
            i += 1;
            continue;
        }
        let alone = test(re!(r"^\s*(?:--\s*)?$"), head) && test(re!(r"^\s*[,.!]?\s*$"), tail);
        let signed_off = test(re!(r"^[,.!\s]*$"), tail) && test(re!(r"(?:thanks|cheers|merci|danke|gracias|bedankt|groeten|grüße|saludos|regards)[,!\s]*$", "i"), head);
        if greeted || speaker || (given && (alone || signed_off)) {
            spans.push(span(&words, i, i));
        }
        i += 1;
    }
    spans
}

fn names_in_fields(ctx: &Ctx<'_>) -> Vec<Span> {
    let s = sets();
    let text = ctx.text;
    let mut spans = Vec::new();
    for f in ctx.fields() {
        if !mentions(FieldKind::Name, &f.label) {
            continue;
        }
        let full = &text[f.start..f.end];
        let stop = full.find([',', '，', ';', '；', '、']);
        let value = stop.map_or(full, |k| &full[..k]);
        let words = words_of(value);
        if words.is_empty() || words.len() > 5 || value.bytes().any(|b| b.is_ascii_digit() || b == b'@') {
            continue;
        }
        let lo = |w: &Word<'_>| w.text.chars().next().map_or(false, |c| test(re!(r"^\p{Lo}$", "u"), c.encode_utf8(&mut [0; 4])));
        if !words.iter().all(|w| is_capitalised(w.text) || s.particles.contains(lower(w.text).as_str()) || lo(w)) {
            continue;
        }
        if words.iter().any(|w| s.stop.contains(lower(w.text).as_str()) && !s.particles.contains(lower(w.text).as_str())) {
            continue;
        }
        spans.push(Span::new(f.start + words[0].start, f.start + words[words.len() - 1].end, EntityType::Person));
    }
    if text.contains('<') && text.contains(':') {
        let header = re!(r#"^(?:from|to|cc|reply-to|von|an|de|à|para|van|aan)\s*:\s*"?([^"<>\n@]+?)"?\s*<[^>\n]+>"#, "gimu");
        for m in header.captures_iter(text).flatten() {
            let g1 = m.get(1).expect("name");
            let name = g1.as_str().trim_matches(super::fields::is_js_space);
            let at = g1.start() + (g1.as_str().len() - g1.as_str().trim_start_matches(super::fields::is_js_space).len());
            if !name.is_empty() && words_of(name).iter().all(|w| is_capitalised(w.text) || s.particles.contains(lower(w.text).as_str())) {
                spans.push(Span::new(at, at + name.len(), EntityType::Person));
            }
        }
    }
    spans
}

/// Person names found by rules; may overlap each other (the caller merges).
pub fn detect_names_by_rules(ctx: &Ctx<'_>) -> Vec<Span> {
    let mut out = names_in_fields(ctx);
    out.extend(names_in_prose(ctx.text));
    out
}

/// The names of `text` by the gazetteer-and-rules model, overlapping ones merged into one.
pub fn detect_names(ctx: &Ctx<'_>) -> Vec<Span> {
    let mut all = detect_names_by_rules(ctx);
    all.sort_by_key(|s| s.start);
    let mut merged: Vec<Span> = Vec::new();
    for s in all {
        match merged.last_mut() {
            Some(last) if s.start < last.end => last.end = last.end.max(s.end),
            _ => merged.push(s),
        }
    }
    merged
}
