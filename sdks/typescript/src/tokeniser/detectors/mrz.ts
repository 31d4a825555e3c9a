import { spansFromRegex, type Detector } from "./Detector.ts"

// The machine-readable zone of a passport, visa or identity card (ICAO Doc 9303): two lines of 44 characters
// (TD3, passports), two of 36 (TD2) or three of 30 (TD1, cards), in A-Z, 0-9 and the filler "<". It holds the
// holder's names, document number, nationality, date of birth, sex and expiry, so the whole zone is one value.
// Accepted when its composite check digit holds, or two of its three field checks (document number, birth date,
// expiry) do: one misread character (OCR) breaks its field's check and the composite, and the zone is still the
// holder's data. Text of this exact shape that is not a zone is rare; it passes by chance about three times in 100.
// Lines are separated by a line break (with spaces around it) or nothing at all, as OCR output joins them.
const SEP = String.raw`[ \t]*(?:\r?\n[ \t]*)?`
const TD3 = new RegExp(String.raw`(?<![A-Z0-9<])(P[A-Z0-9<]{43})${SEP}([A-Z0-9<]{44})(?![A-Z0-9<])`, "g")
const TD2 = new RegExp(String.raw`(?<![A-Z0-9<])([PIACV][A-Z0-9<]{35})${SEP}([A-Z0-9<]{36})(?![A-Z0-9<])`, "g")
const TD1 = new RegExp(String.raw`(?<![A-Z0-9<])([IACV][A-Z0-9<]{29})${SEP}([A-Z0-9<]{30})${SEP}([A-Z0-9<]{30})(?![A-Z0-9<])`, "g")

const WEIGHTS = [7, 3, 1] as const

/** ICAO 9303 check digit: digits are their value, A-Z 10-35, "<" 0, weighted 7-3-1, modulo 10. */
export const mrzCheckDigit = (field: string): number => {
  let sum = 0
  for (let i = 0; i < field.length; i++) {
    const c = field.charCodeAt(i)
    const value = c === 60 /* < */ ? 0 : c <= 57 ? c - 48 : c - 55
    sum += value * WEIGHTS[i % 3]!
  }
  return sum % 10
}

/** A field and its check character: the digit must match; "<" only stands for the check of an all-filler field. */
const checks = (field: string, check: string): boolean =>
  check === "<" ? /^<*$/.test(field) : /^\d$/.test(check) && Number(check) === mrzCheckDigit(field)

/** [number, birth, expiry, composite] check results. */
const enoughHold = ([number, birth, expiry, composite]: readonly [boolean, boolean, boolean, boolean]): boolean =>
  composite || [number, birth, expiry].filter(Boolean).length >= 2

/** TD3 and TD2 second lines share their layout up to the optional data: number, nationality, birth, sex, expiry. */
const twoLineSecondValid = (line: string): boolean => {
  const n = line.length
  const composite = line.slice(0, 10) + line.slice(13, 20) + line.slice(21, n - 1)
  return enoughHold([
    checks(line.slice(0, 9), line[9]!),
    checks(line.slice(13, 19), line[19]!),
    checks(line.slice(21, 27), line[27]!),
    checks(composite, line[n - 1]!)
  ])
}

const td1Valid = (first: string, second: string): boolean =>
  enoughHold([
    checks(first.slice(5, 14), first[14]!),
    checks(second.slice(0, 6), second[6]!),
    checks(second.slice(8, 14), second[14]!),
    checks(first.slice(5, 30) + second.slice(0, 7) + second.slice(8, 15) + second.slice(18, 29), second[29]!)
  ])

export const mrzDetector: Detector = {
  type: "MRZ",
  detect: (text) => [
    ...spansFromRegex(text, TD3, "MRZ", (m) => (twoLineSecondValid(m[2]!) ? { start: m.index, end: m.index + m[0].length } : undefined)),
    ...spansFromRegex(text, TD2, "MRZ", (m) => (twoLineSecondValid(m[2]!) ? { start: m.index, end: m.index + m[0].length } : undefined)),
    ...spansFromRegex(text, TD1, "MRZ", (m) => (td1Valid(m[1]!, m[2]!) ? { start: m.index, end: m.index + m[0].length } : undefined))
  ]
}
