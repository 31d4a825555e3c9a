//! Offsets and context helpers. The engine works on UTF-8 byte offsets; where the TypeScript engine counts
//! UTF-16 code units (how far to look back, how long a value is), these helpers count the same units.

use super::jsre::test;
use crate::re;

/// UTF-16 length of `s` (JavaScript's `length`).
pub fn u16len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The byte index `units` UTF-16 code units before `index` (or 0).
pub fn back(text: &str, index: usize, units: usize) -> usize {
    let mut n = 0;
    let mut at = index;
    for (i, c) in text[..index].char_indices().rev() {
        n += c.len_utf16();
        if n > units {
            break;
        }
        at = i;
    }
    at
}

/// The byte index `units` UTF-16 code units after `index` (or the end).
pub fn forward(text: &str, index: usize, units: usize) -> usize {
    let mut n = 0;
    for (i, c) in text[index..].char_indices() {
        n += c.len_utf16();
        if n > units {
            return index + i;
        }
    }
    text.len()
}

/// Byte offset -> UTF-16 offset, for many offsets of one text.
pub struct Utf16Index {
    /// (byte offset, utf16 offset, byte length, utf16 length) of every non-ASCII char.
    marks: Vec<(usize, usize, usize, usize)>,
}

impl Utf16Index {
    pub fn new(text: &str) -> Self {
        let mut marks = Vec::new();
        let mut u = 0;
        for (i, c) in text.char_indices() {
            if !c.is_ascii() {
                marks.push((i, u, c.len_utf8(), c.len_utf16()));
            }
            u += c.len_utf16();
        }
        Utf16Index { marks }
    }
    pub fn at(&self, byte: usize) -> usize {
        let k = self.marks.partition_point(|m| m.0 < byte);
        if k == 0 {
            return byte;
        }
        let (b, u, l8, l16) = self.marks[k - 1];
        u + l16 + (byte - b - l8)
    }
}

/// Byte offset -> UTF-16 offset of one position.
pub fn to_u16(text: &str, byte: usize) -> usize {
    u16len(&text[..byte])
}

/// UTF-16 offset -> byte offset (None when it falls inside a character).
pub fn from_u16(text: &str, units: usize) -> Option<usize> {
    let mut n = 0;
    for (i, c) in text.char_indices() {
        if n == units {
            return Some(i);
        }
        if n > units {
            return None;
        }
        n += c.len_utf16();
    }
    (n == units).then_some(text.len())
}

/// The text of the same line before `index`, at most `width` UTF-16 units.
pub fn text_before(text: &str, index: usize, width: usize) -> &str {
    let slice = &text[back(text, index, width)..index];
    match slice.rfind('\n') {
        Some(nl) => &slice[nl + 1..],
        None => slice,
    }
}

/// A reference number label right before `index` (order, invoice, ISBN...): not personal data.
pub fn follows_non_personal_label(text: &str, index: usize) -> bool {
    test(
        re!(
            r"(?:\b(?:order|orders|invoice|invoices|inv|tracking|track|ref|reference|ticket|case|isbn(?:-1[03])?|issn|ean|upc|sku|serial|s\/n|part|item|article|confirmation|booking|reservation|shipment|parcel|package|po|receipt|build|commande|facture|rechnung|bestellung|bestellnummer|auftrag|pedido|factura|referencia|n[ºo°]\s*de\s*pedido)\b\.?\s*(?:no\.?|nr\.?|number|num\.?|n[ºo°]|#|id|code|numéro|nummer|número)?\s*[:#=]?\s*)$",
            "i"
        ),
        text_before(text, index, 40),
    )
}

pub fn is_letter_or_number(c: char) -> bool {
    c.is_alphanumeric()
}

/// True when the characters just outside [start, end) are not letters or digits (a whole-token match).
pub fn is_delimited(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    !before.map_or(false, is_ln) && !after.map_or(false, is_ln)
}

/// `[\p{L}\p{N}]`.
pub fn is_ln(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    static LN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let mut buf = [0u8; 4];
    LN.get_or_init(|| regex::Regex::new(r"^[\p{L}\p{N}]$").expect("regex")).is_match(c.encode_utf8(&mut buf))
}

pub fn digits_only(value: &str) -> String {
    value.chars().filter(char::is_ascii_digit).collect()
}

pub fn count_digits(value: &str) -> usize {
    value.bytes().filter(u8::is_ascii_digit).count()
}
