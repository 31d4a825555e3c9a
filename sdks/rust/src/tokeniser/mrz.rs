//! The machine-readable zone of a passport, visa or identity card (ICAO Doc 9303), whole: the same shapes and check
//! rule as the TypeScript engine's detectors/mrz.ts. Two lines of 44 (TD3, passports), two of 36 (TD2) or three of 30
//! (TD1, cards), in A-Z, 0-9 and "<", separated by a line break (spaces around it) or nothing. Accepted when the
//! composite check digit holds, or two of the three field checks (document number, birth date, expiry) do: one
//! misread character breaks its field and the composite, and the zone is still the holder's data.

use super::detectors::{g as group, spans_from_regex, whole};
use super::fields::Ctx;
use super::types::{EntityType, Span};
use crate::re;

const WEIGHTS: [u32; 3] = [7, 3, 1];

/// ICAO 9303 check digit: digits are their value, A-Z 10-35, "<" 0, weighted 7-3-1, modulo 10.
pub fn check_digit(field: &str) -> u32 {
    let mut sum = 0;
    for (i, b) in field.bytes().enumerate() {
        let value = match b {
            b'<' => 0,
            b'0'..=b'9' => u32::from(b - b'0'),
            _ => u32::from(b) - 55,
        };
        sum += value * WEIGHTS[i % 3];
    }
    sum % 10
}

/// A field and its check character: the digit must match; "<" only stands for the check of an all-filler field.
fn checks(field: &str, check: u8) -> bool {
    if check == b'<' {
        return field.bytes().all(|b| b == b'<');
    }
    check.is_ascii_digit() && u32::from(check - b'0') == check_digit(field)
}

fn enough_hold(number: bool, birth: bool, expiry: bool, composite: bool) -> bool {
    composite || [number, birth, expiry].iter().filter(|x| **x).count() >= 2
}

/// TD3 and TD2 second lines: number, nationality, birth, sex, expiry, optional data, composite.
fn two_line_second_valid(line: &str) -> bool {
    let b = line.as_bytes();
    let n = b.len();
    let composite = format!("{}{}{}", &line[0..10], &line[13..20], &line[21..n - 1]);
    enough_hold(checks(&line[0..9], b[9]), checks(&line[13..19], b[19]), checks(&line[21..27], b[27]), checks(&composite, b[n - 1]))
}

fn td1_valid(first: &str, second: &str) -> bool {
    let (f, s) = (first.as_bytes(), second.as_bytes());
    let composite = format!("{}{}{}{}", &first[5..30], &second[0..7], &second[8..15], &second[18..29]);
    enough_hold(checks(&first[5..14], f[14]), checks(&second[0..6], s[6]), checks(&second[8..14], s[14]), checks(&composite, s[29]))
}

pub fn mrz(ctx: &Ctx<'_>) -> Vec<Span> {
    let td3 = re!(r"(?<![A-Z0-9<])(P[A-Z0-9<]{43})[ \t]*(?:\r?\n[ \t]*)?([A-Z0-9<]{44})(?![A-Z0-9<])", "g");
    let td2 = re!(r"(?<![A-Z0-9<])([PIACV][A-Z0-9<]{35})[ \t]*(?:\r?\n[ \t]*)?([A-Z0-9<]{36})(?![A-Z0-9<])", "g");
    let td1 = re!(r"(?<![A-Z0-9<])([IACV][A-Z0-9<]{29})[ \t]*(?:\r?\n[ \t]*)?([A-Z0-9<]{30})[ \t]*(?:\r?\n[ \t]*)?([A-Z0-9<]{30})(?![A-Z0-9<])", "g");
    let mut spans = spans_from_regex(ctx.text, td3, EntityType::Mrz, |c| two_line_second_valid(group(c, 2)).then(|| whole(c)));
    spans.extend(spans_from_regex(ctx.text, td2, EntityType::Mrz, |c| two_line_second_valid(group(c, 2)).then(|| whole(c))));
    spans.extend(spans_from_regex(ctx.text, td1, EntityType::Mrz, |c| td1_valid(group(c, 1), group(c, 2)).then(|| whole(c))));
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icao_specimens_check_digits() {
        assert_eq!(check_digit("L898902C3"), 6);
        assert_eq!(check_digit("740812"), 2);
        assert_eq!(check_digit("120415"), 9);
    }
}
