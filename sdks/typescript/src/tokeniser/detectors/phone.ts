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
 * every region, so it is parsed once; anything else is parsed once per region. `memo` holds the hits of the
 * windows already parsed in this text: a repeated run ("12 12 12 ...") cut into pieces gives the same window
 * over and over, and is then parsed once per region instead of once per piece.
 */
const hitsIn = (
  window: string,
  segment: string,
  regions: ReadonlyArray<CountryCode>,
  inLongRun: boolean,
  memo: Map<string, ReturnType<typeof findNumbers>>
) => {
  const international = segment.startsWith("+") && segment.indexOf("+", 1) === -1
  const tried = international ? regions.slice(0, 1) : regions
  return tried.flatMap((region) => {
    const key = `${region}\u0000${inLongRun}\u0000${window}`
    let hits = memo.get(key)
    if (hits === undefined) {
      hits = findNumbers(window, { defaultCountry: region, v2: true, ...(inLongRun ? { maxTries: triesFor(window) } : {}) })
      memo.set(key, hits)
    }
    return hits
  })
}

/**
 * The longest window given to the library, and how far apart long runs' windows start. The library's cost per
 * window grows faster than its length (it re-parses every digit group of a failed candidate, per region), so a
 * run of digits and separators longer than a phone ("12 12 12 ..." over 100 KB took seconds) is read as
 * overlapping pieces of at most PIECE_CHARS characters, cut at group boundaries and starting at most PIECE_STEP
 * apart: every number of up to PIECE_CHARS - PIECE_STEP characters (a phone with an extension is about 30) lies
 * whole in one piece. Runs up to PIECE_CHARS long are read whole, as before (the longest in the PII corpora
 * is 52).
 */
const PIECE_CHARS = 64
const PIECE_STEP = 32
/** The library reads at most 21 digit groups as one candidate; a piece holds no more, so it is one candidate. */
const PIECE_GROUPS = 21

/**
 * Candidates the library may reject in one piece of a long run before it gives up on the piece. Digits and spaces:
 * the whole piece, its first group and each of its (at most 21) groups alone, so every group is tried. Runs that
 * also hold dots, dashes, slashes or brackets make the library try groups again for each kind of separator (random
 * such runs cost more than before pieces); those pieces get a few tries, so a long run of that junk is read at a
 * bounded cost per piece, and a phone inside it is found only among the first candidates of a piece.
 */
const PIECE_TRIES = PIECE_GROUPS + 4
const MIXED_PIECE_TRIES = 8
const triesFor = (piece: string): number => (/^[\d ]+$/.test(piece) ? PIECE_TRIES : MIXED_PIECE_TRIES)

/**
 * A piece of a long run that the library cannot turn into a phone this detector keeps, so it is not parsed: only
 * digits and spaces (the library then tries the whole piece, and each group alone), more digits than any number
 * (24: 17 national digits, a 3-digit country code and slack), and no group long enough to be a phone alone (7).
 * The common case of a long run ("12 12 12 ...", a column of amounts), read at a cost per group and per region.
 */
const cannotHoldPhone = (piece: string): boolean =>
  /^[\d ]+$/.test(piece) && (piece.match(/\d/g)?.length ?? 0) > 24 && !/\d{7}/.test(piece)

/** [start, end) ranges of `segment` (offsets into it) to read: the segment itself, or overlapping pieces of a long one. */
const piecesOf = (segment: string): Array<readonly [number, number]> => {
  if (segment.length <= PIECE_CHARS) return [[0, segment.length]]
  // Where each digit group starts (at the "+" or "(" right before it, if any) and ends; one of each per group.
  const groupStarts: Array<number> = []
  const groupEnds: Array<number> = []
  for (let i = 0; i < segment.length; i++) {
    const digit = /\d/.test(segment[i]!)
    if (digit && (i === 0 || !/\d/.test(segment[i - 1]!))) groupStarts.push(/[+(]/.test(segment[i - 1] ?? "") ? i - 1 : i)
    if (digit && (i === segment.length - 1 || !/\d/.test(segment[i + 1]!))) groupEnds.push(i + 1)
  }
  const pieces: Array<readonly [number, number]> = []
  let g = 0
  let e = 0
  let start = 0
  for (;;) {
    // End at the last group end within PIECE_CHARS (or cut a single longer group).
    while (e < groupEnds.length - 1 && groupEnds[e + 1]! - start <= PIECE_CHARS && e + 1 - g < PIECE_GROUPS) e++
    const end = groupEnds[e]! > start && groupEnds[e]! - start <= PIECE_CHARS ? groupEnds[e]! : Math.min(segment.length, start + PIECE_CHARS)
    pieces.push([start, end])
    if (end >= segment.length) break
    // The next piece starts at the last group start within PIECE_STEP, or PIECE_STEP on inside a long group.
    while (g < groupStarts.length - 1 && groupStarts[g + 1]! <= start + PIECE_STEP) g++
    start = groupStarts[g]! > start ? groupStarts[g]! : start + PIECE_STEP
  }
  return pieces
}

export const makePhoneDetector = (regions: ReadonlyArray<CountryCode>): Detector => ({
  type: "PHONE",
  detect: (text) => {
    const found: Array<Span> = []
    const scanned = withoutEmptyBrackets(text)
    const memo = new Map<string, ReturnType<typeof findNumbers>>()
    for (const whole of scanned.matchAll(DIGIT_SEGMENT)) {
     for (const [pieceStart, pieceEnd] of piecesOf(whole[0])) {
      const segment = { 0: whole[0].slice(pieceStart, pieceEnd), index: whole.index + pieceStart }
      const digitCount = segment[0].match(/\d/g)?.length ?? 0
      if (digitCount < 7) continue
      if (whole[0].length > PIECE_CHARS && cannotHoldPhone(segment[0])) continue
      // A little context on each side, as the library saw it in the whole text: it rejects numbers that run
      // into a time ("2024-03-15 14:22:05") and is several times faster than on a bare window. Inside a long
      // run the neighbours are more of the run, which the piece must not take in.
      const from = pieceStart === 0 ? Math.max(0, segment.index - 8) : segment.index
      // A national number needs 9 digits (looksLikeNationalPhone): a shorter run without a "+" before it (a date,
      // an amount, a short reference: common in tables) cannot give a phone, and is not parsed once per region.
      if (digitCount < 9 && !segment[0].startsWith("+") && !/\+\s*$/.test(scanned.slice(from, segment.index))) continue
      const to = pieceEnd === whole[0].length ? segment.index + segment[0].length + 8 : segment.index + segment[0].length
      const window = scanned.slice(from, to)
      for (const hit of hitsIn(window, segment[0], regions, whole[0].length > PIECE_CHARS, memo)) {
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
