import { findNumbers, type CountryCode } from "libphonenumber-js/max"
import type { Span } from "../types.ts"
import { followsNonPersonalLabel, isDelimited, textBefore } from "./context.ts"
import type { Detector } from "./Detector.ts"

const isInternational = (raw: string): boolean => /^(?:\+|00[1-9])/.test(raw)

const PHONE_CUE =
  /\b(?:tel|tél|phone|telephone|téléphone|telefon|telefono|teléfono|telefoon|mobile|mobil|mobiel|móvil|cell|cellphone|handy|portable|fax|call|calling|dial|ring|ruf|rufen|appelez|appeler|llama|llámame|llámanos|bel|chiama|chiamami|text|sms|whatsapp|number|numéro|nummer|número|numero|contact)\b[^\n\d]{0,20}$/i

/**
 * Numbers written without a country prefix are only phones when they are written like phones. The
 * library's "valid" test alone accepts many reference numbers, because some numbering plans (Germany's)
 * allow almost any length. So a national number must have at least 9 digits; digit groups after the
 * first must have 2 or more digits ("1.3.6.1.4.1.311", "4 8 15 16 23 42" are not phones); dots only in
 * the North American "646.555.0143" or French "01.42.68.53.00" layouts; dashes only between groups of
 * 2-4 digits, and never in the SSN layout 3-2-4; and a bare digit run only after a phone cue
 * ("call 4155550123"), since an unformatted run is more often an order or account number.
 */
const looksLikeNationalPhone = (text: string, start: number, raw: string): boolean => {
  const digits = raw.replace(/\D/g, "")
  if (digits.length < 9) return false
  const body = raw.replace(/\s*(?:ext\.?|x|#)\s*\d+$/i, "")
  const groups = body.split(/[^\d]+/).filter((g) => g !== "")
  if (groups.slice(1).some((g) => g.length < 2)) return false
  if (body.includes(".") && !/^\d{3}\.\d{3}\.\d{4}$/.test(body) && !/^0\d(?:\.\d{2}){4}$/.test(body)) return false
  if (body.includes("-")) {
    const dashed = body.replace(/^\(\d+\)\s*/, "").split(/[- ]/)
    if (dashed.some((g) => g.length < 2 || g.length > 4)) return false
    if (/^\d{3}-\d{2}-\d{4}$/.test(body)) return false
  }
  if (/^\d+$/.test(body)) return PHONE_CUE.test(textBefore(text, start, 40))
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
 * property test, seed 1244357578). Cues and context are still read from the text itself.
 */
const withoutEmptyBrackets = (text: string): string =>
  text.replace(/[(\[][^\d()[\]\n]*[)\]]/g, (group) => " ".repeat(group.length))

export const makePhoneDetector = (regions: ReadonlyArray<CountryCode>): Detector => ({
  type: "PHONE",
  detect: (text) => {
    const found: Array<Span> = []
    const scanned = withoutEmptyBrackets(text)
    for (const region of regions) {
      for (const hit of findNumbers(scanned, { defaultCountry: region, v2: true })) {
        if (!hit.number.isValid()) continue
        let start = hit.startsAt
        let end = hit.endsAt
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
        // An extension found by the library is kept only when written as one ("ext", "x", "#").
        if (hit.number.ext !== undefined && !/(?:ext\.?|x|#)\s*\d+$/i.test(raw)) continue
        if (!isInternational(raw) && !looksLikeNationalPhone(text, start, raw)) continue
        found.push({ start, end, type: "PHONE" })
      }
    }
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

export const DEFAULT_PHONE_REGIONS: ReadonlyArray<CountryCode> = ["US", "GB", "FR", "DE", "ES", "NL"]
