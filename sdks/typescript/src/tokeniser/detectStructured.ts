import type { CountryCode } from "libphonenumber-js/max"
import { cardDetector } from "./detectors/card.ts"
import { cryptoWalletDetector } from "./detectors/cryptoWallet.ts"
import { dateOfBirthDetector } from "./detectors/dateOfBirth.ts"
import type { Detector } from "./detectors/Detector.ts"
import { emailDetector } from "./detectors/email.ts"
import { esDniDetector } from "./detectors/esDni.ts"
import { frNirDetector } from "./detectors/frNir.ts"
import { ibanDetector, rejectedIbanRuns } from "./detectors/iban.ts"
import { ipv4Detector } from "./detectors/ipv4.ts"
import { ipv6Detector } from "./detectors/ipv6.ts"
import { mrzDetector } from "./detectors/mrz.ts"
import { nationalIdDetector } from "./detectors/nationalId.ts"
import { nlBsnDetector } from "./detectors/nlBsn.ts"
import { passportDetector } from "./detectors/passport.ts"
import { DEFAULT_PHONE_REGIONS, makePhoneDetector } from "./detectors/phone.ts"
import { ukNinoDetector } from "./detectors/ukNino.ts"
import { urlCredentialsDetector } from "./detectors/urlCredentials.ts"
import { usSsnDetector } from "./detectors/usSsn.ts"
import type { EntityType, Span } from "./types.ts"

/**
 * When two detections overlap, the earlier type in this list wins: the most specific, strongest
 * validated shapes first (a URL with credentials contains an e-mail-like "user:pass@host"; a card or
 * an IBAN is also a long digit run that a phone parser may accept); names come last so a model never
 * overrides a validated identifier. A passport's machine-readable zone comes first: it is one value (names, number,
 * birth date together) that nothing inside it may split.
 */
export const PRIORITY: ReadonlyArray<EntityType> = [
  "MRZ",
  "URL_CREDENTIALS",
  "EMAIL",
  "IBAN",
  "CARD",
  "FR_NIR",
  "US_SSN",
  "UK_NINO",
  "ES_DNI",
  "NL_BSN",
  "NATIONAL_ID",
  "DATE_OF_BIRTH",
  "PASSPORT",
  "CRYPTO_WALLET",
  "IPV6",
  "IPV4",
  "PHONE",
  "PERSON"
]

export interface StructuredOptions {
  /** Regions whose national phone formats are recognised (international "+" numbers always are). */
  readonly phoneRegions?: ReadonlyArray<CountryCode>
}

export const structuredDetectors = (options: StructuredOptions = {}): ReadonlyArray<Detector> => [
  mrzDetector,
  urlCredentialsDetector,
  emailDetector,
  ibanDetector,
  cardDetector,
  frNirDetector,
  usSsnDetector,
  ukNinoDetector,
  esDniDetector,
  nlBsnDetector,
  nationalIdDetector,
  dateOfBirthDetector,
  passportDetector,
  cryptoWalletDetector,
  ipv6Detector,
  ipv4Detector,
  makePhoneDetector(options.phoneRegions ?? DEFAULT_PHONE_REGIONS)
]

/** Keeps a non-overlapping subset: higher priority first, then the longer span, then the earlier one. */
export const resolveOverlaps = (spans: ReadonlyArray<Span>): Array<Span> => {
  const rank = (s: Span) => PRIORITY.indexOf(s.type)
  const ordered = [...spans].sort(
    (a, b) => rank(a) - rank(b) || b.end - b.start - (a.end - a.start) || a.start - b.start
  )
  // Kept spans stay sorted by start and never overlap, so one binary search finds the only two neighbours
  // a new span could overlap (linear-logarithmic instead of quadratic on long texts).
  const kept: Array<Span> = []
  for (const s of ordered) {
    if (s.end <= s.start) continue
    let lo = 0
    let hi = kept.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (kept[mid]!.start < s.start) lo = mid + 1
      else hi = mid
    }
    const next = kept[lo]
    const previous = kept[lo - 1]
    if ((next === undefined || s.end <= next.start) && (previous === undefined || previous.end <= s.start)) kept.splice(lo, 0, s)
  }
  return kept
}

/** `text` with every span replaced by as many "Q"s (offsets unchanged), built in one pass: linear in the text. */
const maskSpans = (text: string, spans: ReadonlyArray<Span>): string => {
  const ordered = [...spans].sort((a, b) => a.start - b.start)
  const parts: Array<string> = []
  let at = 0
  for (const s of ordered) {
    if (s.end <= at) continue
    const from = Math.max(at, s.start)
    parts.push(text.slice(at, from), "Q".repeat(s.end - from))
    at = s.end
  }
  parts.push(text.slice(at))
  return parts.join("")
}

/**
 * Runs the detectors. The phone parser runs last, on the text with every other detection masked:
 * it reads digit runs greedily, so "(212) 555-0187 250-57-7909" would otherwise be read as one
 * invalid number and the phone next to the SSN would be missed.
 */
export const detectStructured = (
  text: string,
  detectors: ReadonlyArray<Detector> = structuredDetectors()
): Array<Span> => {
  // A rejected IBAN-shaped run is consumed: its digit groups must not come back as a phone or a card.
  const rejected = detectors.some((d) => d.type === "IBAN") ? rejectedIbanRuns(text) : []
  const outsideRejected = (s: Span) => !rejected.some((r) => s.start < r.end && s.end > r.start)
  const others = detectors.filter((d) => d.type !== "PHONE").flatMap((d) => d.detect(text)).filter(outsideRejected)
  const phones = detectors.filter((d) => d.type === "PHONE")
  if (phones.length === 0) return resolveOverlaps(others)
  const masked = maskSpans(text, [...others, ...rejected.map((r) => ({ ...r, type: "IBAN" as const }))])
  return resolveOverlaps([...others, ...phones.flatMap((d) => d.detect(masked))])
}
