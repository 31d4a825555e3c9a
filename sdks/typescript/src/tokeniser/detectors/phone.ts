import { findNumbers, type CountryCode } from "libphonenumber-js/max"
import type { Span } from "../types.ts"
import { followsNonPersonalLabel, isDelimited, textBefore } from "./context.ts"
import type { Detector } from "./Detector.ts"
import { fieldKindAt, fieldsOfKind, wholeValueKindAt } from "./fieldKinds.ts"

const isInternational = (raw: string): boolean => /^(?:\+|00[1-9])/.test(raw)

const PHONE_CUE =
  /\b(?:tel|tél|phone|telephone|téléphone|telefon|telefono|teléfono|telefoon|mobile|mobil|mobiel|móvil|cell|cellphone|handy|portable|fax|call|calling|dial|ring|ruf|rufen|appelez|appeler|llama|llámame|llámanos|bel|chiama|chiamami|text|sms|whatsapp|number|numéro|nummer|número|numero|contact|joindre|joignable|erreichbar|anrufen|bereikbaar|contactar|llamar|localizar)\b[^\n\d]{0,20}$/i

/**
 * Numbers written without a country prefix are only phones when they are written like phones. The
 * library's "valid" test alone accepts many reference numbers, because some numbering plans (Germany's)
 * allow almost any length. So a national number must have at least 9 digits; digit groups after the
 * first must have 2 or more digits ("1.3.6.1.4.1.311", "4 8 15 16 23 42" are not phones); dots only in
 * the North American "646.555.0143" or French "01.42.68.53.00" layouts; dashes only between groups of
 * 2-4 digits, and never in the SSN layout 3-2-4; and a bare digit run only after a phone cue
 * ("call 4155550123") or when it is a mobile number with its trunk "0", since an unformatted run is more
 * often an order or account number.
 */
const looksLikeNationalPhone = (text: string, start: number, raw: string, labelledPhone: boolean, trunkMobile: boolean): boolean => {
  const digits = raw.replace(/\D/g, "")
  if (digits.length < 9) return false
  const body = raw.replace(/\s*(?:ext\.?|x|#)\s*\d+$/i, "")
  const groups = body.split(/[^\d]+/).filter((g) => g !== "")
  if (groups.slice(1).some((g) => g.length < 2)) return false
  if (body.includes(".") && !/^\d{3}\.\d{3}\.\d{4}$/.test(body) && !/^0\d(?:\.\d{2}){4}$/.test(body)) return false
  // Dutch numbers put one dash after the area or mobile prefix: "06-12345678", "020-5302211", "010-123 4567".
  const dutchDash = /^0\d{1,3}-\d{3,8}(?: \d{2,4})*$/.test(body) && digits.length === 10
  if (body.includes("-") && !dutchDash) {
    const dashed = body.replace(/^\(\d+\)\s*/, "").split(/[- ]/)
    if (dashed.some((g) => g.length < 2 || g.length > 4)) return false
    if (/^\d{3}-\d{2}-\d{4}$/.test(body)) return false
  }
  // A bare run is a phone after a cue or a label, or when it is a mobile number with its national trunk
  // "0" ("0612345678", "07911123456"): reference numbers rarely start with 0 and fall in a mobile range.
  if (/^\d+$/.test(body)) return labelledPhone || trunkMobile || PHONE_CUE.test(textBefore(text, start, 40))
  return true
}

/**
 * Phone numbers via libphonenumber-js (the "max" metadata, so validity is checked against the full
 * numbering plans, not only lengths). Numbers written with "+" or "00" are found whatever the
 * regions; national formats ("020 7946 0958") are found for each region in `regions`.
 */
/**
 * The text as the library gets to see it: brackets that hold no digit ("()", "[ ]", "(see)") blanked out, same
 * length so offsets stay those of the text. The library starts a candidate at such a bracket, fails to parse it and
 * does not look again inside it, so "() +44 20 7946 0958" would otherwise go unfound (found by the round-trip
 * property test, seed 1244357578). Cell and field separators (comma, semicolon, bar, tab) become line breaks:
 * no phone contains one, and the library would otherwise read "+34 673 27 38 66,2021" as one run and lose
 * the number before the next cell. Cues and context are still read from the text itself.
 */
const withoutEmptyBrackets = (text: string): string =>
  text.replace(/[(\[][^\d()[\]\n]*[)\]]/g, (group) => " ".repeat(group.length)).replace(/[,;|\t]/g, "\n")

/**
 * Where phone numbers can be: runs of digits, spaces, brackets, dots, dashes and slashes with a leading
 * "+" or "(" and an optional written extension. Only these windows go to the library (most of a text has
 * no digits), which keeps detection linear and cheap on long texts.
 */
const DIGIT_SEGMENT = /[+(]?\d[\d \u00a0().\-\/]*\d(?:\s*(?:ext\.?|x|#)\s*\d{1,6})?/gi

/**
 * The library's hits in one window for each region. A window holding one "+" number reads the same under
 * every region, so it is parsed once; anything else is parsed once per region.
 */
const hitsIn = (window: string, segment: string, regions: ReadonlyArray<CountryCode>) => {
  const international = segment.startsWith("+") && segment.indexOf("+", 1) === -1
  const tried = international ? regions.slice(0, 1) : regions
  return tried.flatMap((region) => findNumbers(window, { defaultCountry: region, v2: true }))
}

export const makePhoneDetector = (regions: ReadonlyArray<CountryCode>): Detector => ({
  type: "PHONE",
  detect: (text) => {
    const found: Array<Span> = []
    const scanned = withoutEmptyBrackets(text)
    for (const segment of scanned.matchAll(DIGIT_SEGMENT)) {
      const digitCount = segment[0].match(/\d/g)?.length ?? 0
      if (digitCount < 7) continue
      // A little context on each side, as the library saw it in the whole text: it rejects numbers that run
      // into a time ("2024-03-15 14:22:05") and is several times faster than on a bare window.
      const from = Math.max(0, segment.index - 8)
      // A national number needs 9 digits (looksLikeNationalPhone): a shorter run without a "+" before it (a date,
      // an amount, a short reference: common in tables) cannot give a phone, and is not parsed once per region.
      if (digitCount < 9 && !segment[0].startsWith("+") && !/\+\s*$/.test(scanned.slice(from, segment.index))) continue
      const window = scanned.slice(from, segment.index + segment[0].length + 8)
      for (const hit of hitsIn(window, segment[0], regions)) {
        if (!hit.number.isValid()) continue
        let start = from + hit.startsAt
        let end = from + hit.endsAt
        // The library may take an unmatched bracket before or after the number ("( (212) 555-0187").
        const unbalanced = (s: string) => (s.match(/\(/g)?.length ?? 0) - (s.match(/\)/g)?.length ?? 0)
        for (;;) {
          const head = text.slice(start, end)
          if (end - start <= 1) break
          if (!/^(?:\d|\+|\(\+?\d)/.test(head) || (head.startsWith("(") && unbalanced(head) > 0)) start += 1
          else break
        }
        while (unbalanced(text.slice(start, end)) < 0 && text.slice(start, end).endsWith(")")) end -= 1
        const raw = text.slice(start, end)
        // A run of bare digits right after an order/invoice/ISBN label is a reference, not a phone.
        if (!raw.startsWith("+") && followsNonPersonalLabel(text, start)) continue
        if (!isDelimited(text, start, end)) continue
        const kind = fieldKindAt(text, start, end)
        if (wholeValueKindAt(text, start, end) === "reference" && !isInternational(raw)) continue
        // An extension found by the library is kept only when written as one ("ext", "x", "#").
        if (hit.number.ext !== undefined && !/(?:ext\.?|x|#)\s*\d+$/i.test(raw)) continue
        const trunkMobile = /^0[1-9]\d{8,9}$/.test(raw) && hit.number.getType() === "MOBILE"
        if (!isInternational(raw) && !looksLikeNationalPhone(text, start, raw, kind === "phone", trunkMobile)) continue
        found.push({ start, end, type: "PHONE" })
      }
    }
    found.push(...labelledPhones(text, found))
    // The same number is usually found under several regions: keep each distinct range once.
    const seen = new Set<string>()
    return found.filter((s) => {
      const key = `${s.start}:${s.end}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  }
})

export const DEFAULT_PHONE_REGIONS: ReadonlyArray<CountryCode> = ["US", "GB", "FR", "DE", "ES", "NL", "IE", "BE", "IT", "CH", "AT"]

/**
 * Regions tried on a value whose field is labelled as a phone ("Tel.:", a `phone` column, vCard `TEL`):
 * the label already says it is a number to call, so any EU/EEA national layout is accepted.
 */
const LABELLED_REGIONS: ReadonlyArray<CountryCode> = [
  ...DEFAULT_PHONE_REGIONS,
  ...(["PT", "PL", "SE", "DK", "FI", "NO", "LU", "CZ", "SK", "HU", "RO", "BG", "GR", "HR", "SI", "EE", "LV", "LT", "MT", "CY", "IS", "LI", "CA", "AU"] as const)
]

/** Phones inside phone-labelled fields that the region scan did not find. */
const labelledPhones = (text: string, found: ReadonlyArray<Span>): Array<Span> => {
  const out: Array<Span> = []
  for (const f of fieldsOfKind(text, "phone")) {
    if (found.some((s) => s.start < f.end && s.end > f.start)) continue
    const value = text.slice(f.start, f.end).replace(/[,;|\t]/g, "\n")
    for (const region of LABELLED_REGIONS) {
      const hit = findNumbers(value, { defaultCountry: region, v2: true }).find((h) => h.number.isValid())
      if (hit === undefined) continue
      const start = f.start + hit.startsAt
      const end = f.start + hit.endsAt
      if (isDelimited(text, start, end) && /^[+(\d]/.test(text.slice(start, end))) out.push({ start, end, type: "PHONE" })
      break
    }
  }
  return out
}
