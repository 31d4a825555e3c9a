//! Reads the structure of a text: which values sit under which label (delimited and markdown tables, JSON and
//! YAML keys, key=value, form labels, vCard), and what a label says its value is (fieldKinds.ts). Port of the
//! TypeScript engine's detectors/fields.ts and detectors/fieldKinds.ts.

use super::jsre::test;
use super::text::u16len;
use crate::re;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub label: String,
    pub start: usize,
    pub end: usize,
}

/// One text being scanned, with its fields read once and its labels' kinds remembered.
pub struct Ctx<'a> {
    pub text: &'a str,
    fields: OnceLock<Vec<Field>>,
    kinds: RefCell<HashMap<String, Option<FieldKind>>>,
}

impl<'a> Ctx<'a> {
    pub fn new(text: &'a str) -> Self {
        Ctx { text, fields: OnceLock::new(), kinds: RefCell::new(HashMap::new()) }
    }

    pub fn fields(&self) -> &[Field] {
        self.fields.get_or_init(|| fields_of(self.text))
    }

    /// The field whose value contains [start, end), if any.
    pub fn field_at(&self, start: usize, end: usize) -> Option<&Field> {
        let fields = self.fields();
        let last = fields.partition_point(|f| f.start <= start);
        if last == 0 {
            return None;
        }
        let last = last - 1;
        (last.saturating_sub(4)..=last).rev().map(|k| &fields[k]).find(|f| f.start <= start && f.end >= end)
    }

    pub fn kind_of_label(&self, label: &str) -> Option<FieldKind> {
        if let Some(k) = self.kinds.borrow().get(label) {
            return *k;
        }
        let n = normalise(label);
        let kind = KINDS.iter().find(|(_, re)| test(re(), &n)).map(|(k, _)| *k);
        self.kinds.borrow_mut().insert(label.to_string(), kind);
        kind
    }

    pub fn field_kind_at(&self, start: usize, end: usize) -> Option<FieldKind> {
        self.field_at(start, end).and_then(|f| self.kind_of_label(&f.label))
    }

    /// The kind of the field whose whole value is [start, end) (give or take quotes, brackets, currency signs).
    pub fn whole_value_kind_at(&self, start: usize, end: usize) -> Option<FieldKind> {
        let f = self.field_at(start, end)?;
        let rest = format!("{}{}", &self.text[f.start..start], &self.text[end..f.end]);
        if u16len(&self.text[f.start..f.end]) - u16len(&self.text[start..end]) > 16 {
            return None;
        }
        if test(re!(r#"^[\s"'()[\]#€$£:=.,-]*$"#), &rest) {
            self.kind_of_label(&f.label)
        } else {
            None
        }
    }

    pub fn fields_of_kind(&self, kind: FieldKind) -> Vec<Field> {
        self.fields().iter().filter(|f| self.kind_of_label(&f.label) == Some(kind)).cloned().collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    Dob,
    Passport,
    Ssn,
    Nino,
    Bsn,
    SteuerId,
    Ahv,
    BeNationalNumber,
    Ppsn,
    Pesel,
    Personnummer,
    Cpr,
    Hetu,
    CodiceFiscale,
    Ip,
    Phone,
    Version,
    Reference,
    Name,
}

type Pattern = fn() -> &'static super::jsre::Regex;

static KINDS: [(FieldKind, Pattern); 19] = [
    (FieldKind::Dob, || re!(r"\b(?:dob|d\.o\.b|birth ?dates?|date (?:of )?birth|birthday|born|date de naissance|date naissance|n[ée]e?(?: ?\(e\))? le|geburtsdatum|geb\.?(?: ?-? ?datum)?|geboren(?: am| op)?|fecha (?:de )?nacimiento|f\.? nacimiento|nacid[oa](?: el)?|geboortedatum|geb\. ?datum|data (?:di )?nascita|nat[oa] il)(?:$|[\s:.])", "iu")),
    (FieldKind::Passport, || re!(r"\b(?:passport|passeport|reisepass|pass[ -]?(?:nr|nummer)|pasaporte|passaporto|passaporte|paspoort)", "iu")),
    (FieldKind::Ssn, || re!(r"\b(?:ssn|social security)\b", "iu")),
    (FieldKind::Nino, || re!(r"\b(?:nino|ni (?:number|no)|national insurance)\b", "iu")),
    (FieldKind::Bsn, || re!(r"\b(?:bsn|burgerservicenummer|sofi ?-?nummer)\b", "iu")),
    (FieldKind::SteuerId, || re!(r"\b(?:steuer ?-?id(?:nr)?|steuer ?-?idnr|steueridentifikationsnummer|idnr|identifikationsnummer)\b", "iu")),
    (FieldKind::Ahv, || re!(r"\b(?:ahv|avs|sozialversicherungsnummer)\b", "iu")),
    (FieldKind::BeNationalNumber, || re!(r"(?:rijksregister|registre national|num[ée]ro national|\bniss\b|\binsz\b)", "iu")),
    (FieldKind::Ppsn, || re!(r"\b(?:ppsn?|pps (?:no|number)|personal public service)\b", "iu")),
    (FieldKind::Pesel, || re!(r"\bpesel\b", "iu")),
    (FieldKind::Personnummer, || re!(r"\bperson(?:nummer|nr)\b", "iu")),
    (FieldKind::Cpr, || re!(r"\bcpr\b", "iu")),
    (FieldKind::Hetu, || re!(r"\b(?:hetu|henkil[öo]tunnus)\b", "iu")),
    (FieldKind::CodiceFiscale, || re!(r"\b(?:codice fiscale|cf)\b", "iu")),
    (FieldKind::Ip, || re!(r"\b(?:ip|ipv4|ips|ip ?-?ad(?:d)?res(?:s|se)?|remote addr|addr|direcci[óo]n ip|adresse ip|ip-adres|peer)\b", "iu")),
    (FieldKind::Phone, || re!(r"\b(?:phone|tel|t[ée]l|t[ée]l[ée]phone|telefon|telefoon|tel[ée]fono|telefonnummer|telefoonnummer|mobile?|mobil|mobilnummer|mobiel|m[óo]vil|cell|handy|portable|fax|gsm|contact number)\b", "iu")),
    (FieldKind::Version, || re!(r"\b(?:version|versie|versi[óo]n|app version|client|user agent|agent|sdk|release|build|firmware)\b", "iu")),
    (FieldKind::Reference, || re!(r"\b(?:order|orders|invoice|ref|reference|tracking|ticket|sku|ean|upc|isbn|serial|item|article|confirmation|booking|reservation|shipment|receipt|commande|facture|rechnung|bestellnummer|bestellung|auftrag|pedido|factura|bestelling|ordernummer|factuur|id|record|kundennummer|kd nr|klantnummer|n° client|nº cliente|identifiant|amount|montant|betrag|importe|bedrag|price|total|summe|pid|port|bytes|count|zip|postcode|plz)\b", "iu")),
    (FieldKind::Name, || re!(r"\b(?:name|full name|first name|last name|given name|surname|customer|contact|patient|cardholder|employee|nom|pr[ée]nom|client|titulaire|vorname|nachname|familienname|kunde|kundin|karteninhaber|mitarbeiter|nombre|apellidos|cliente|titular|paciente|naam|voornaam|achternaam|klant|rekeninghouder|pati[ëe]nt|fn)\b|姓名|联系人|聯絡人|名字|氏名|名前|担当者|имя|фио|отправитель", "iu")),
];

fn pattern_of(kind: FieldKind) -> &'static super::jsre::Regex {
    KINDS.iter().find(|(k, _)| *k == kind).map(|(_, p)| p()).expect("every kind has a pattern")
}

/// `birth_date`, `birthDate` and `Birth-Date` all read "birth date".
pub fn normalise(label: &str) -> String {
    let mut out = String::with_capacity(label.len() + 4);
    let mut prev: Option<char> = None;
    for c in label.chars() {
        if c.is_uppercase() && prev.map_or(false, |p| p.is_lowercase()) {
            out.push(' ');
        }
        prev = Some(c);
        out.push(c);
    }
    let replaced = re!("[_]+", "g").replace_all(&out, |_| " ".to_string());
    replaced.to_lowercase().trim_matches(is_js_space).to_string()
}

pub fn is_js_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}')
}

/// True when `s` (a label or the words before a value) names `kind`.
pub fn mentions(kind: FieldKind, s: &str) -> bool {
    test(pattern_of(kind), &normalise(s))
}

/// True when the words before `start` on the same line, after the last digit there, name `kind`.
pub fn mentioned_before(kind: FieldKind, text: &str, start: usize, width: usize) -> bool {
    let from = super::text::back(text, start, width);
    let mut window = &text[from..start];
    let nl = window.rfind('\n');
    let digit = re!(r"\d[^\d]*$").find(window).ok().flatten().map(|m| m.start());
    let cut = match (nl, digit) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    if let Some(cut) = cut {
        // Both a newline and a digit are one byte.
        window = &window[cut + 1..];
    }
    if test(re!(r"\b(?:no|not|without|unknown|geen|zonder|kein|keine|ohne|sans|aucun|sin|ningún)\b", "i"), window) {
        return false;
    }
    test(pattern_of(kind), &normalise(window))
}

struct Line<'a> {
    text: &'a str,
    start: usize,
}

fn lines_of(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut at = 0;
    loop {
        let nl = text[at..].find('\n').map(|i| at + i);
        let end = nl.unwrap_or(text.len());
        let raw = &text[at..end];
        lines.push(Line { text: raw.strip_suffix('\r').unwrap_or(raw), start: at });
        match nl {
            None => return lines,
            Some(nl) => at = nl + 1,
        }
    }
}

struct Cell {
    text: String,
    start: usize,
    end: usize,
}

fn cells_of(line: &Line<'_>, sep: &str) -> Vec<Cell> {
    let s = line.text;
    let b = s.as_bytes();
    let mut cells = Vec::new();
    let mut i = 0;
    loop {
        let mut start = i;
        let end;
        let next;
        while start < b.len() && b[start] == b' ' {
            start += 1;
        }
        if b.get(start) == Some(&b'"') {
            let mut j = start + 1;
            while j < b.len() && !(b[j] == b'"' && b.get(j + 1) != Some(&b'"')) {
                j += if b[j] == b'"' { 2 } else { 1 };
            }
            let close = s.get(j.min(s.len())..).and_then(|r| r.find(sep)).map(|k| j + k);
            next = close.unwrap_or(s.len());
            start += 1;
            end = j.min(s.len());
        } else {
            let close = s[i..].find(sep).map(|k| i + k);
            next = close.unwrap_or(s.len());
            let mut e = next;
            while e > start && b[e - 1] == b' ' {
                e -= 1;
            }
            end = e;
        }
        let (cs, ce) = (start.min(end.max(start)), end.max(start));
        let text = s.get(cs..ce).unwrap_or("").to_string();
        cells.push(Cell { text, start: line.start + cs, end: line.start + ce });
        if next >= s.len() {
            return cells;
        }
        i = next + sep.len();
    }
}

fn markdown_cells(line: &Line<'_>) -> Option<Vec<Cell>> {
    let t = line.text.trim_matches(is_js_space);
    if !t.starts_with('|') || !t.ends_with('|') || u16len(t) < 3 {
        return None;
    }
    let offset = line.text.find('|')?;
    let last = line.text.rfind('|')?;
    let inner = Line { text: &line.text[offset + 1..last], start: line.start + offset + 1 };
    Some(
        cells_of(&inner, "|")
            .into_iter()
            .map(|c| {
                let lead = c.text.len() - c.text.trim_start_matches(is_js_space).len();
                let v = c.text.trim_matches(is_js_space).to_string();
                let start = c.start + lead;
                Cell { end: start + v.len(), start, text: v }
            })
            .collect(),
    )
}

fn is_markdown_rule(cells: &[Cell]) -> bool {
    cells.iter().all(|c| test(re!(r"^:?-{2,}:?$"), &c.text))
}

fn looks_like_header(cells: &[Cell]) -> bool {
    cells.iter().all(|c| {
        let n = u16len(&c.text);
        n > 0 && n <= 48 && !test(re!(r"[@:={}[\]]"), &c.text) && c.text.bytes().filter(u8::is_ascii_digit).count() <= 2
    }) && cells.iter().any(|c| c.text.chars().any(char::is_alphabetic) && test(re!(r"\p{L}", "u"), &c.text))
}

const SEPARATORS: [&str; 3] = ["\t", ";", ","];

fn read_tables(lines: &[Line<'_>], in_table: &mut [bool], out: &mut Vec<Field>) {
    let mut i = 0;
    while i + 1 < lines.len() {
        let header = &lines[i];
        let mut matched = false;
        if let Some(md_header) = markdown_cells(header).filter(|h| h.len() >= 2 && looks_like_header(h)) {
            let mut j = i + 1;
            let mut rows: Vec<Vec<Cell>> = Vec::new();
            while j < lines.len() {
                match markdown_cells(&lines[j]) {
                    Some(cells) if cells.len() == md_header.len() => {
                        if !is_markdown_rule(&cells) {
                            rows.push(cells);
                        }
                    }
                    _ => break,
                }
                j += 1;
            }
            if !rows.is_empty() {
                for row in rows {
                    for (k, c) in row.into_iter().enumerate() {
                        if c.end > c.start {
                            out.push(Field { label: md_header[k].text.clone(), start: c.start, end: c.end });
                        }
                    }
                }
                for flag in in_table.iter_mut().take(j).skip(i) {
                    *flag = true;
                }
                i = j;
                matched = true;
            }
        }
        if !matched {
            for sep in SEPARATORS {
                if !header.text.contains(sep) {
                    continue;
                }
                let head = cells_of(header, sep);
                if head.len() < 2 || !looks_like_header(&head) {
                    continue;
                }
                let mut j = i + 1;
                while j < lines.len() && lines[j].text.contains(sep) && cells_of(&lines[j], sep).len() == head.len() {
                    j += 1;
                }
                if j == i + 1 {
                    continue;
                }
                for line in &lines[i + 1..j] {
                    for (n, c) in cells_of(line, sep).into_iter().enumerate() {
                        if c.end > c.start {
                            out.push(Field { label: head[n].text.clone(), start: c.start, end: c.end });
                        }
                    }
                }
                for flag in in_table.iter_mut().take(j).skip(i) {
                    *flag = true;
                }
                i = j;
                matched = true;
                break;
            }
        }
        if !matched {
            i += 1;
        }
    }
}

const MAX_VALUE: usize = 240;

fn push_value(out: &mut Vec<Field>, label: &str, start: usize, value: &str) {
    let lead = value.len() - value.trim_start_matches(is_js_space).len();
    let v = value.trim_matches(is_js_space);
    if !v.is_empty() && u16len(v) <= MAX_VALUE {
        out.push(Field { label: label.to_string(), start: start + lead, end: start + lead + v.len() });
    }
}

fn read_line(line: &Line<'_>, out: &mut Vec<Field>) {
    let before = out.len();
    let s = line.text;
    let trimmed_end = s.trim_end_matches(is_js_space).len();
    let vcard_re = re!(r"^([A-Z][A-Z-]*(?:;[^:\n]*)?):(\S[^\n]*?)\s*$");
    if let Ok(Some(vcard)) = vcard_re.captures(s) {
        let label = vcard.get(1).map_or("", |m| m.as_str());
        if label.contains(';') {
            let value = vcard.get(2).map_or("", |m| m.as_str());
            push_value(out, label, line.start + trimmed_end - value.len(), value);
            return;
        }
    }
    if s.contains('"') && s.contains(':') {
        let re = re!(r#""([^"\n]{1,60})"\s*:\s*(?:"((?:[^"\\\n]|\\.)*)"|(-?\d[\d.]*))"#, "gu");
        for m in re.captures_iter(s).flatten() {
            let whole = m.get(0).expect("match");
            let (value, quoted) = match m.get(2) {
                Some(v) => (v.as_str(), true),
                None => (m.get(3).map_or("", |v| v.as_str()), false),
            };
            let at = whole.end() - value.len() - usize::from(quoted);
            push_value(out, m.get(1).map_or("", |l| l.as_str()), line.start + at, value);
        }
    }
    if out.len() == before && (s.contains('"') || s.contains('\'')) && s.contains(':') {
        let re = re!(r#"(?<![\p{L}\p{N}_"'])([\p{L}_][\p{L}\p{N}_]{0,40})\s*:\s*(["'])([^\n]*?)\2"#, "gu");
        for m in re.captures_iter(s).flatten() {
            let whole = m.get(0).expect("match");
            let value = m.get(3).map_or("", |v| v.as_str());
            push_value(out, m.get(1).map_or("", |l| l.as_str()), line.start + whole.end() - 1 - value.len(), value);
        }
    }
    if s.contains('=') {
        let re = re!(r#"(?<![\p{L}\p{N}_.\-])([\p{L}_][\p{L}\p{N}_.\-]{0,40})=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s,;&"')]+))"#, "gu");
        for m in re.captures_iter(s).flatten() {
            let whole = m.get(0).expect("match");
            let quoted = m.get(2).is_some() || m.get(3).is_some();
            let value = m.get(2).or(m.get(3)).or(m.get(4)).map_or("", |v| v.as_str());
            push_value(out, m.get(1).map_or("", |l| l.as_str()), line.start + whole.end() - value.len() - usize::from(quoted), value);
        }
    }
    if out.len() == before && (s.contains(':') || s.contains('：') || s.contains(" - ")) {
        let line_label = re!(r"^[ \t]*(?:-[ \t]+)?(\p{L}[\p{L}\p{M}\p{N}_.'’()\/#°º\-]*(?: [\p{L}\p{M}\p{N}_.'’()\/#°º\-]+){0,4}?)[ \t]*(?:[:：]|[ \t]-[ \t])[ \t]*(\S[^\n]*?)[ \t]*$", "u");
        let m = vcard_re.captures(s).ok().flatten().or_else(|| line_label.captures(s).ok().flatten());
        if let Some(m) = m {
            let mut value = m.get(2).map_or("", |v| v.as_str());
            if !value.starts_with("//") {
                let mut at = trimmed_end - value.len();
                let bytes = value.as_bytes();
                if bytes.len() >= 2 && (bytes[0] == b'"' || bytes[0] == b'\'') && bytes[bytes.len() - 1] == bytes[0] {
                    value = &value[1..value.len() - 1];
                    at += 1;
                }
                push_value(out, m.get(1).map_or("", |l| l.as_str()), line.start + at, value);
            }
        }
    }
}

/// Every labelled value of `text`, in text order.
pub fn fields_of(text: &str) -> Vec<Field> {
    let lines = lines_of(text);
    let mut in_table = vec![false; lines.len()];
    let mut fields = Vec::new();
    if text.contains('\n') {
        read_tables(&lines, &mut in_table, &mut fields);
    }
    for (i, line) in lines.iter().enumerate() {
        if !in_table[i] && !line.text.is_empty() {
            read_line(line, &mut fields);
        }
    }
    fields.sort_by_key(|f| f.start);
    fields
}
