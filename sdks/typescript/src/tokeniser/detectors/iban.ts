import { countrySpecs, electronicFormatIBAN, isValidIBAN } from "ibantools"
import type { Span } from "../types.ts"
import type { Detector } from "./Detector.ts"
import { allMatches, withGlobalRegex } from "./reusedRegex.ts"

// Country code, check digits, then the BBAN either contiguous or in the printed groups of four
// ("DE89 3704 0044 0532 0130 00"). The candidate may swallow a following word ("... 00 FROM"), so we
// try the longest candidate first and drop trailing groups until ibantools accepts it (ISO 13616:
// country length and mod-97 check), which makes an accidental match practically impossible.
const IBAN_CANDIDATE = /(?<![\p{L}\p{N}])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){3,9}(?![\p{L}\p{N}])/gu

export const ibanDetector: Detector = {
  type: "IBAN",
  detect: (text) => withGlobalRegex(IBAN_CANDIDATE, (candidates) => {
    const spans: Array<Span> = []
    for (let m = candidates.exec(text); m !== null; m = candidates.exec(text)) {
      const start = m.index
      let candidate = m[0]
      while (candidate.length >= 15) {
        const electronic = electronicFormatIBAN(candidate)
        if (electronic !== null && electronic !== undefined && isValidIBAN(electronic)) {
          spans.push({ start, end: start + candidate.length, type: "IBAN" })
          break
        }
        const cut = candidate.lastIndexOf(" ")
        if (cut <= 4) break
        candidate = candidate.slice(0, cut)
      }
      // Resume right after what was taken (or the first character when nothing was), so an IBAN that
      // follows another one is not lost inside the first candidate.
      const found = spans.length > 0 && spans[spans.length - 1]!.start === start
      candidates.lastIndex = found ? spans[spans.length - 1]!.end : start + 1
    }
    return spans
  })
}

/**
 * Runs shaped exactly like an IBAN of a known country (country code, two digits, the country's length,
 * written contiguous or in groups of four) that fail its check. They are not IBANs, but neither are their
 * digit groups phones or cards: detectStructured consumes these ranges so nothing else re-mines them.
 */
export const rejectedIbanRuns = (text: string): Array<{ start: number; end: number }> => {
  const runs: Array<{ start: number; end: number }> = []
  for (const m of allMatches(text, IBAN_CANDIDATE)) {
    const length = countrySpecs[m[0].slice(0, 2).toUpperCase()]?.chars
    let candidate = m[0]
    for (;;) {
      const electronic = electronicFormatIBAN(candidate) ?? ""
      if (length !== undefined && electronic.length === length && /^(?:\S+|\S{4}(?: \S{4})*(?: \S{1,4})?)$/.test(candidate)) {
        if (!isValidIBAN(electronic)) runs.push({ start: m.index, end: m.index + candidate.length })
        break
      }
      const cut = candidate.lastIndexOf(" ")
      if (cut <= 4) break
      candidate = candidate.slice(0, cut)
    }
  }
  return runs
}
