//! The portable name model (the TypeScript engine's names/nameRules.ts, the Python engine's tokeniser/names): person
//! names by gazetteers, capitalisation, position and per-language cue words, all read from the one data file every
//! engine reads, sdks/vectors/name-model.json (here the Python package's byte-for-byte copy, data/name-model.json,
//! included at build time). Linear in the text: one pass over its words plus set look-ups.

use super::fields::{is_js_space, Ctx};
use super::jsre::{compile, test, Regex};
use super::text::{back, forward};
use super::types::{EntityType, Span};
use crate::re;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::OnceLock;

const NAME_MODEL_JSON: &str = include_str!("../../../python/src/privacy_relay/tokeniser/data/name-model.json");

struct Model {
    given: HashSet<String>,
    surname: HashSet<String>,
    place: HashSet<String>,
    calendar: HashSet<String>,
    /// Names that are also ordinary words or only names in context: never a name by themselves.
    ambiguous: HashSet<String>,
    /// Ordinary English words, lower case ("Grace Period" is a thing).
    common: HashSet<String>,
    titles: HashSet<String>,
    greetings: HashSet<String>,
    particles: HashSet<String>,
    capitalised_particles: HashSet<String>,
    stop: HashSet<String>,
    articles: HashSet<String>,
    place_prefixes: HashSet<String>,
    alone_not_a_name: HashSet<String>,
    possessive_links: HashSet<String>,
    name_labels: Vec<String>,
    name_label_fragments: Vec<String>,
    sign_off: Regex,
    introducer: Regex,
    mail_header: Regex,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// A per-language cue list ({"en": [...], ...}) or a plain list, as one list.
fn union(v: &Value) -> Vec<String> {
    match v.as_object() {
        Some(o) => o.values().flat_map(strings).collect(),
        None => strings(v),
    }
}

fn lower_set(words: Vec<String>) -> HashSet<String> {
    words.iter().map(|w| w.to_lowercase()).collect()
}

/// Escapes a cue phrase for an ECMAScript pattern, as the TypeScript engine does.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if ".*+?^${}()|[]\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn model() -> &'static Model {
    static CELL: OnceLock<Model> = OnceLock::new();
    CELL.get_or_init(|| {
        let v: Value = serde_json::from_str(NAME_MODEL_JSON).expect("name-model.json");
        let lex = &v["lexicon"];
        let cues = &v["cues"];
        let lexicon = |k: &str| -> HashSet<String> { ["faker", "compromise", "frequent"].iter().flat_map(|s| strings(&lex[*s][k])).collect() };
        let alternatives = |words: Vec<String>| words.iter().map(|w| escape(w)).collect::<Vec<_>>().join("|");
        Model {
            given: lexicon("given"),
            surname: lexicon("surnames"),
            place: strings(&lex["faker"]["places"]).into_iter().collect(),
            calendar: strings(&lex["faker"]["calendar"]).into_iter().collect(),
            ambiguous: strings(&lex["compromise"]["ambiguous"]).into_iter().collect(),
            common: strings(&lex["compromise"]["common_words"]).into_iter().chain(strings(&lex["dictionary"]["words"])).collect(),
            titles: lower_set(union(&cues["titles"])),
            greetings: lower_set(union(&cues["greetings"])),
            particles: lower_set(union(&cues["particles"])),
            capitalised_particles: lower_set(union(&cues["capitalised_particles"])),
            stop: lower_set(union(&cues["stop_words"])),
            articles: lower_set(union(&cues["articles"])),
            place_prefixes: lower_set(union(&cues["place_prefixes"])),
            alone_not_a_name: lower_set(union(&cues["alone_not_a_name"])),
            possessive_links: lower_set(union(&cues["possessive_links"])),
            name_labels: union(&cues["name_labels"]).iter().map(|p| format!(" {p} ")).collect(),
            name_label_fragments: union(&cues["name_label_fragments"]),
            sign_off: compile(&format!("(?:{})[,!\\s]*$", alternatives(union(&cues["sign_offs"]))), "iu"),
            introducer: compile(&format!("(?:^|[^\\p{{L}}])(?:{}) *:? *$", alternatives(union(&cues["introducers"]))), "iu"),
            mail_header: compile(
                &format!("^(?:{})\\s*:\\s*\"?([^\"<>\\n@]+?)\"?\\s*<[^>\\n]+>", alternatives(union(&cues["mail_headers"]))),
                "gimu",
            ),
        }
    })
}

/// The gazetteer's sizes (given names, surnames, place words, calendar words), for engine_info.
pub fn gazetteer_sizes() -> [usize; 4] {
    let m = model();
    [m.given.len(), m.surname.len(), m.place.len(), m.calendar.len()]
}

/// A label's words, lower case, space-separated and padded: "customerName" and "customer_name" read " customer name ".
fn label_words(label: &str) -> String {
    let mut split = String::new();
    let mut prev: Option<char> = None;
    for c in label.chars() {
        if prev.map_or(false, is_ll) && is_lu(c) {
            split.push(' ');
        }
        split.push(c);
        prev = Some(c);
    }
    let lowered = split.to_lowercase();
    let words: Vec<&str> = re!(r"[\p{L}\p{M}\p{N}]+", "gu").find_iter(&lowered).flatten().map(|m| m.as_str()).collect();
    format!(" {} ", words.join(" "))
}

/// True when a field label (table header, JSON key, form label) says its value is a person's name.
fn is_name_label(label: &str) -> bool {
    let m = model();
    let words = label_words(label);
    if m.name_labels.iter().any(|p| words.contains(p.as_str())) {
        return true;
    }
    let low = label.to_lowercase();
    m.name_label_fragments.iter().any(|f| low.contains(f.as_str()))
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
    let m = model();
    m.given.contains(w) || (w.contains('-') && w.split('-').all(|p| m.given.contains(p)))
}

fn is_surname(w: &str) -> bool {
    let m = model();
    m.surname.contains(w) || (w.contains('-') && w.split('-').all(|p| m.surname.contains(p) || m.given.contains(p)))
}

/// A given name that is a name even by itself: not also an ordinary word, a place, a month or a trade.
fn is_strong_given(w: &str) -> bool {
    let m = model();
    is_given(w) && !m.ambiguous.contains(w) && !m.place.contains(w) && !m.calendar.contains(&lower(w)) && !m.alone_not_a_name.contains(&lower(w))
}

/// A capitalised word that may be part of a name (not a stop word, month or weekday).
fn name_like(w: &str) -> bool {
    if !is_capitalised(w) {
        return false;
    }
    let m = model();
    let l = lower(w);
    !m.stop.contains(&l) && !m.greetings.contains(&l) && !m.calendar.contains(&l) && !m.titles.contains(&l) && !m.place_prefixes.contains(&l)
}

fn is_possessive(w: &str) -> bool {
    base(w).len() != w.len()
}

/// The index of the first word after a run of particles starting at j, or j.
fn after_particles(text: &str, words: &[Word<'_>], j: usize) -> usize {
    let mut k = j;
    while k + 1 < words.len() && is_particle(words[k].text) && joined(text, &words[k], &words[k + 1]) {
        k += 1;
    }
    k
}

fn is_particle(w: &str) -> bool {
    let m = model();
    let l = lower(w);
    m.particles.contains(&l) && (!is_capitalised(w) || m.capitalised_particles.contains(&l))
}

/// A capitalised particle ("Le", "Van") is a name's part only before another capitalised word.
fn is_particle_only(w: &str) -> bool {
    model().capitalised_particles.contains(&lower(w))
}

/// Only a single space joins the words of one name.
fn joined(text: &str, a: &Word<'_>, b: &Word<'_>) -> bool {
    b.start == a.end + 1 && text.as_bytes()[a.end] == b' '
}

/// Extends a name starting at word i to the right: capitalised words, and particles followed by one.
fn extend(text: &str, words: &[Word<'_>], i: usize, limit: usize) -> usize {
    let mut last = i;
    let mut j = i + 1;
    while j < words.len() && j - i <= limit + 2 && joined(text, &words[j - 1], &words[j]) {
        // A possessive ends the name: "Chloe Okafor's Social Security number".
        if is_possessive(words[last].text) {
            break;
        }
        let w = words[j].text;
        let mut k = j;
        while k < words.len() && is_particle(words[k].text) && k + 1 < words.len() && joined(text, &words[k], &words[k + 1]) {
            k += 1;
        }
        if k > j && name_like(words[k].text) && !is_particle(words[k].text) {
            last = k;
            j = k + 1;
            continue;
        }
        if name_like(w) && !is_particle_only(w) {
            last = j;
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

/// The line before the one starting at `line_start` (at most 40 UTF-16 units of its end).
fn previous_line(text: &str, line_start: usize) -> &str {
    if line_start == 0 {
        return "";
    }
    let end = line_start - 1;
    let before = &text[back(text, end, 40)..end];
    &before[before.rfind('\n').map_or(0, |k| k + 1)..]
}

/// The UTF-16 length of text[from..to] (the TypeScript engine measures gaps in code units).
fn units(text: &str, from: usize, to: usize) -> usize {
    text[from..to].chars().map(char::len_utf16).sum()
}

/// True when words[i] starts a line of one to four name-like words right after a sign-off line or `--`.
fn is_signature_line(text: &str, words: &[Word<'_>], i: usize) -> bool {
    let m = model();
    let w = words[i];
    let head = line_head(text, w.start);
    if !test(re!(r"^\s*(?:--\s*)?$"), head) || (m.common.contains(&lower(w.text)) && !is_given(w.text)) || m.place.contains(w.text) {
        return false;
    }
    let before = previous_line(text, w.start - head.len());
    if !test(&m.sign_off, before) && !test(re!(r"^\s*--\s*$"), before) {
        return false;
    }
    let last = extend(text, words, i, 3);
    test(re!(r"^\s*[,.!]?\s*$"), line_tail(text, words[last].end))
}

fn names_in_prose(text: &str) -> Vec<Span> {
    let m = model();
    let words = words_of(text);
    let mut spans = Vec::new();
    let name_particles = ["van", "von", "ten", "ter", "vom", "zu"];
    let title_gap = |from: usize, to: usize| text[from..to].chars().all(|c| c == '.' || is_js_space(c));
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        // Most words are neither capitalised nor a particle: nothing to do for them.
        if !is_capitalised(w.text) && !(w.text.chars().count() <= 5 && m.particles.contains(&lower(w.text))) {
            i += 1;
            continue;
        }
        let previous = if i > 0 && units(text, words[i - 1].end, w.start) <= 2 { Some(words[i - 1]) } else { None };
        let prev_lower = previous.map_or(String::new(), |p| lower(p.text));
        let prev_title = prev_lower.strip_suffix('.').unwrap_or(&prev_lower).to_string();
        // "Mevr. de Vries", "Sra. de la Fuente": particles right after a title start the surname.
        if let Some(p) = previous {
            if m.titles.contains(&prev_title) && m.particles.contains(&lower(w.text)) && title_gap(p.end, w.start) {
                let mut j = i;
                while j + 1 < words.len() && m.particles.contains(&lower(words[j].text)) && joined(text, &words[j], &words[j + 1]) {
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
        let b = base(w.text);
        if let Some(p) = previous {
            if m.titles.contains(&prev_lower) && title_gap(p.end, w.start) {
                let last = extend(text, &words, i, 4);
                spans.push(span(&words, i, last));
                i = last + 1;
                continue;
            }
        }
        if previous.is_some() && m.articles.contains(&prev_lower) {
            i += 1;
            continue;
        }
        if test(&m.introducer, &text[back(text, w.start, 30)..w.start]) {
            let last = extend(text, &words, i, 4);
            if last > i || !m.place.contains(w.text) {
                spans.push(span(&words, i, last));
                i = last + 1;
                continue;
            }
        }
        let next = words.get(i + 1).copied();
        let next_base = next.map_or("", |n| base(n.text));
        let before_surname = next.map_or(false, |n| {
            joined(text, &w, &n) && is_capitalised(n.text) && m.surname.contains(next_base) && !m.given.contains(next_base) && !m.place.contains(w.text)
        });
        let given = is_given(b);
        let strong = given && is_strong_given(b);
        let next_joined = next.map_or(false, |n| joined(text, &w, &n) && name_like(n.text));
        let next_known = is_surname(next_base) || is_given(next_base);
        let unknown_word = !m.common.contains(&lower(next_base)) && !m.place.contains(next_base) && !is_particle_only(next_base);
        let after_run = if next.map_or(false, |n| joined(text, &w, &n)) { after_particles(text, &words, i + 1) } else { i + 1 };
        let particles_then_surname = after_run > i + 1 && is_capitalised(words[after_run].text) && is_surname(base(words[after_run].text));
        let next_ok = if m.ambiguous.contains(b) {
            // An ordinary word after it still makes a name when the two stand alone between brackets, quotes or commas.
            let enclosed = next_joined
                && test(re!(r#"(?:^|[(\["'“‘]\s*)$"#), line_head(text, w.start))
                && next.map_or(false, |n| test(re!(r#"^\s*(?:[,)\]"'”’:;]|$)"#), line_tail(text, n.end)));
            !m.ambiguous.contains(next_base) && (next_known || unknown_word || enclosed)
        } else {
            next_known || unknown_word
        };
        let ambiguous_start = given && ((next_joined && next_ok) || particles_then_surname);
        let starts_name = before_surname || strong || ambiguous_start;
        if !starts_name && is_signature_line(text, &words, i) {
            let last = extend(text, &words, i, 3);
            spans.push(span(&words, i, last));
            i = last + 1;
            continue;
        }
        let particle_name = !starts_name
            && !m.common.contains(&lower(b))
            && !m.place.contains(w.text)
            && next.map_or(false, |n| joined(text, &w, &n) && name_particles.contains(&lower(n.text).as_str()));
        let last = if starts_name || particle_name { extend(text, &words, i, 4) } else { i };
        if last > i {
            if m.place.contains(w.text) && !is_surname(next_base) && !is_given(next_base) {
                i += 1;
                continue;
            }
            spans.push(span(&words, i, last));
            i = last + 1;
            continue;
        }
        let head = line_head(text, w.start);
        let tail = line_tail(text, w.end);
        let alone_head = test(re!(r"^\s*(?:--\s*)?$"), head);
        let alone_tail = test(re!(r"^\s*[,.!]?\s*$"), tail);
        if m.place.contains(w.text) {
            if given && alone_head && alone_tail && test(&m.sign_off, previous_line(text, w.start - head.len())) {
                spans.push(span(&words, i, i));
            }
            i += 1;
            continue;
        }
        let greeted = previous.is_some() && m.greetings.contains(&prev_lower);
        if strong && test(re!("[\"'‘“]$"), head) && test(re!("^[\"'’”]"), tail) {
            spans.push(span(&words, i, i));
            i += 1;
            continue;
        }
        let speaker = test(re!(r"^\s*\[[\d:]+\]\s*$"), head) && test(re!(r"^\s*:"), tail);
        if !given && !greeted && !speaker {
            i += 1;
            continue;
        }
        let signed_off = test(re!(r"^[,.!\s]*$"), tail) && test(&m.sign_off, head);
        let mid_sentence = strong
            && !tail.starts_with(" &")
            && !head.ends_with("& ")
            && previous.map_or(false, |p| {
                (m.possessive_links.contains(&prev_lower) || !is_capitalised(p.text)) && test(re!(r"^ {1,2}$"), &text[p.end..w.start])
            });
        if greeted || speaker || (given && !m.ambiguous.contains(b) && ((alone_head && alone_tail) || signed_off)) || mid_sentence {
            spans.push(span(&words, i, i));
        }
        i += 1;
    }
    spans
}

fn names_in_fields(ctx: &Ctx<'_>) -> Vec<Span> {
    let m = model();
    let text = ctx.text;
    let mut spans = Vec::new();
    for f in ctx.fields() {
        if !is_name_label(&f.label) {
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
        if !words.iter().all(|w| is_capitalised(w.text) || m.particles.contains(&lower(w.text)) || lo(w)) {
            continue;
        }
        if words.iter().any(|w| m.stop.contains(&lower(w.text)) && !m.particles.contains(&lower(w.text))) {
            continue;
        }
        spans.push(Span::new(f.start + words[0].start, f.start + words[words.len() - 1].end, EntityType::Person));
    }
    // A header's display name is always followed by "<address>": most texts have no "<" at all.
    if text.contains('<') {
        for c in m.mail_header.captures_iter(text).flatten() {
            let g1 = c.get(1).expect("name");
            let name = g1.as_str().trim_matches(is_js_space);
            let at = g1.start() + (g1.as_str().len() - g1.as_str().trim_start_matches(is_js_space).len());
            if !name.is_empty() && words_of(name).iter().all(|w| is_capitalised(w.text) || m.particles.contains(&lower(w.text))) {
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

/// The names of `text` by the portable name model, overlapping ones merged into one.
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
