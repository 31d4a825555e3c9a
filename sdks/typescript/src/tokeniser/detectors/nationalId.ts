import type { Span } from "../types.ts"
import { textBefore } from "./context.ts"
import type { Detector } from "./Detector.ts"
import { fieldKindAt, mentions, type FieldKind } from "./fieldKinds.ts"
import { passesLuhn } from "./luhn.ts"
import { allMatches } from "./reusedRegex.ts"

/**
 * National identifiers of EU/EEA countries that have no type of their own, each validated by its
 * published check rule. Those printed in a layout of their own (Swiss "756.1234.5678.97", Belgian
 * "85.07.30-033.28", Italian codice fiscale, Finnish HETU) are taken anywhere; those that are just digits
 * (PESEL, Steuer-ID, personnummer, CPR, PPSN) only after a cue naming them or in a field labelled so,
 * since one random number in ten or so passes their checks.
 */
interface Scheme {
  readonly kind: FieldKind
  readonly pattern: RegExp
  readonly valid: (value: string) => boolean
  /** True when this printed form is distinctive enough to be taken without a cue. */
  readonly standsAlone: (value: string) => boolean
}

const digitsOf = (s: string): string => s.replace(/\D/g, "")
const isDate = (yy: number, mm: number, dd: number): boolean => mm >= 1 && mm <= 12 && dd >= 1 && dd <= 31 && yy >= 0

const mod97 = (numeric: string): number => {
  let r = 0
  for (const c of numeric) r = (r * 10 + Number(c)) % 97
  return r
}

/** Swiss AHV/AVS: 756 + 9 digits + EAN-13 check digit. */
const validAhv = (value: string): boolean => {
  const d = digitsOf(value)
  if (d.length !== 13 || !d.startsWith("756")) return false
  let sum = 0
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3)
  return (10 - (sum % 10)) % 10 === Number(d[12])
}

/** Belgian national number: YYMMDD + serial, check = 97 - (9 digits mod 97), with a "2" in front from 2000. */
const validBelgian = (value: string): boolean => {
  const d = digitsOf(value)
  if (d.length !== 11) return false
  const month = Number(d.slice(2, 4)) % 20 // bis numbers add 20 or 40 to the month
  if (month > 12 || Number(d.slice(4, 6)) > 31) return false
  const check = Number(d.slice(9))
  return 97 - mod97(d.slice(0, 9)) === check || 97 - mod97("2" + d.slice(0, 9)) === check
}

/** Irish PPSN: 7 digits, check letter (weights 8..2, second letter weighted 9), mod 23. */
const validPpsn = (value: string): boolean => {
  const m = /^(\d{7})([A-W])([A-IW]?)$/i.exec(value.toUpperCase())
  if (m === null) return false
  let sum = 0
  for (let i = 0; i < 7; i++) sum += Number(m[1]![i]) * (8 - i)
  if (m[3] !== "") sum += (m[3] === "W" ? 0 : m[3]!.charCodeAt(0) - 64) * 9
  return "WABCDEFGHIJKLMNOPQRSTUV"[sum % 23] === m[2]
}

/** German Steuer-ID: 11 digits, no leading 0, one digit of the first ten used 2 or 3 times, ISO 7064 MOD 11,10. */
const validSteuerId = (value: string): boolean => {
  const d = digitsOf(value)
  if (d.length !== 11 || d[0] === "0") return false
  const counts = new Map<string, number>()
  for (const c of d.slice(0, 10)) counts.set(c, (counts.get(c) ?? 0) + 1)
  const repeated = [...counts.values()].filter((n) => n > 1)
  if (repeated.length !== 1 || repeated[0]! > 3) return false
  let product = 10
  for (const c of d.slice(0, 10)) {
    let sum = (Number(c) + product) % 10
    if (sum === 0) sum = 10
    product = (sum * 2) % 11
  }
  return (11 - product) % 10 === Number(d[10])
}

const CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]
const cfIndex = (c: string): number => (/\d/.test(c) ? Number(c) : c.charCodeAt(0) - 55)
/** Italian codice fiscale: odd positions by table, even positions by value, check letter = sum mod 26. */
const validCodiceFiscale = (value: string): boolean => {
  const v = value.toUpperCase()
  let sum = 0
  for (let i = 0; i < 15; i++) sum += i % 2 === 0 ? CF_ODD[cfIndex(v[i]!)]! : /\d/.test(v[i]!) ? Number(v[i]) : v.charCodeAt(i) - 65
  return String.fromCharCode(65 + (sum % 26)) === v[15]
}

/** Polish PESEL: date (month + 20/40/60/80 per century) and weighted check digit. */
const validPesel = (value: string): boolean => {
  if (!/^\d{11}$/.test(value)) return false
  const month = Number(value.slice(2, 4)) % 20
  if (!isDate(0, month, Number(value.slice(4, 6)))) return false
  const w = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3]
  let sum = 0
  for (let i = 0; i < 10; i++) sum += Number(value[i]) * w[i]!
  return (10 - (sum % 10)) % 10 === Number(value[10])
}

/** Swedish personnummer: (CC)YYMMDD-NNNC, Luhn over the ten digits from YY. */
const validPersonnummer = (value: string): boolean => {
  const d = digitsOf(value)
  const ten = d.length === 12 ? d.slice(2) : d
  return ten.length === 10 && isDate(0, Number(ten.slice(2, 4)), Number(ten.slice(4, 6)) % 60) && passesLuhn(ten)
}

/** Danish CPR: DDMMYY-SSSS with a valid date (the modulus 11 check was dropped in 2007). */
const validCpr = (value: string): boolean => {
  const d = digitsOf(value)
  return d.length === 10 && isDate(0, Number(d.slice(2, 4)), Number(d.slice(0, 2)))
}

/** Finnish HETU: DDMMYY, century sign, individual number, check character = table[9 digits mod 31]. */
const validHetu = (value: string): boolean => {
  const m = /^(\d{6})[-+A-FU-Y](\d{3})([0-9A-Y])$/.exec(value.toUpperCase())
  if (m === null || !isDate(0, Number(m[1]!.slice(2, 4)), Number(m[1]!.slice(0, 2)))) return false
  return "0123456789ABCDEFHJKLMNPRSTUVWXY"[Number(m[1]! + m[2]!) % 31] === m[3]
}

const SCHEMES: ReadonlyArray<Scheme> = [
  { kind: "ahv", pattern: /(?<![\p{L}\p{N}.])756([. ]?)\d{4}\1\d{4}\1\d{2}(?![\p{L}\p{N}]|[.]\d)/gu, valid: validAhv, standsAlone: (v) => v.includes(".") },
  {
    kind: "beNationalNumber",
    pattern: /(?<![\p{L}\p{N}.])\d{2}(?:\.\d{2}\.\d{2}-\d{3}\.\d{2}|\d{9})(?![\p{L}\p{N}]|[.\-]\d)/gu,
    valid: validBelgian,
    standsAlone: (v) => v.includes("-")
  },
  { kind: "ppsn", pattern: /(?<![\p{L}\p{N}])\d{7}[A-W][A-IW]?(?![\p{L}\p{N}])/giu, valid: validPpsn, standsAlone: () => false },
  { kind: "steuerId", pattern: /(?<![\p{L}\p{N}])[1-9]\d(?: ?\d{3}){3}(?![\p{L}\p{N}])/gu, valid: validSteuerId, standsAlone: () => false },
  {
    kind: "codiceFiscale",
    pattern: /(?<![\p{L}\p{N}])[A-Z]{6}\d{2}[A-EHLMPRST]\d{2}[A-Z]\d{3}[A-Z](?![\p{L}\p{N}])/giu,
    valid: validCodiceFiscale,
    standsAlone: (v) => v === v.toUpperCase()
  },
  { kind: "pesel", pattern: /(?<![\p{L}\p{N}])\d{11}(?![\p{L}\p{N}])/gu, valid: validPesel, standsAlone: () => false },
  { kind: "personnummer", pattern: /(?<![\p{L}\p{N}])(?:\d{2})?\d{6}[-+]?\d{4}(?![\p{L}\p{N}])/gu, valid: validPersonnummer, standsAlone: () => false },
  { kind: "cpr", pattern: /(?<![\p{L}\p{N}])\d{6}-?\d{4}(?![\p{L}\p{N}])/gu, valid: validCpr, standsAlone: () => false },
  { kind: "hetu", pattern: /(?<![\p{L}\p{N}])\d{6}[-+A-FU-Y]\d{3}[0-9A-Y](?![\p{L}\p{N}])/gu, valid: validHetu, standsAlone: () => true }
]

export const nationalIdDetector: Detector = {
  type: "NATIONAL_ID",
  detect: (text) => {
    const spans: Array<Span> = []
    for (const scheme of SCHEMES) {
      for (const m of allMatches(text, scheme.pattern)) {
        const start = m.index
        const end = start + m[0].length
        if (!scheme.valid(m[0])) continue
        const cued = () => fieldKindAt(text, start, end) === scheme.kind || mentions(scheme.kind, textBefore(text, start, 32))
        if (scheme.standsAlone(m[0]) || cued()) spans.push({ start, end, type: "NATIONAL_ID" })
      }
    }
    return spans
  }
}
