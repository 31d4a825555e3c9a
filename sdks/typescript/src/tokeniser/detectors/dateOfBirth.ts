import type { Span } from "../types.ts"
import { textBefore } from "./context.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"
import { fieldAt } from "./fields.ts"
import { fieldKindAt, fieldsOfKind } from "./fieldKinds.ts"

// A date is personal data here only when introduced as a birth date; other dates (invoices,
// timestamps, deadlines) are left alone. The span is the date itself, not the cue.
const CUE =
  String.raw`(?:\bborn(?:\s+on)?|\bd\.?o\.?b\.?|\bdate\s+of\s+birth|\bbirth\s?date|\bbirthday(?:\s+is)?|\bn[ée]e?(?:\s?\(e\))?\s+le|\bgeb\.(?:\s*-?\s*datum|\s+am)?|\bgeb\.?\s+am|\bdate\s+de\s+naissance|\bgeboren(?:\s+am)?|\bgeburtsdatum|\bfecha\s+de\s+nacimiento|\bnacid[oa]\s+el|\bf\.\s*nacimiento|\bfecha\s+nacimiento|\bnaci[óo]\s+el|\bdata\s+(?:di\s+)?nascita|\bnat[oa]\s+il|\bnacque\s+il|\bgeboortedatum|\bgeboren\s+op)`
const MONTHS =
  "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|januar|februar|märz|maerz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari|februari|maart|mei|augustus"
// ISO, year-first with slashes (1985/03/14), numeric day-month-year in any order with . / - (two-digit years too),
// day-abbreviated month-year with dashes (14-Mar-1985), day (ordinal, "1er", "14th of") month name year, and
// month name day year ("March 14th, 1985").
const DATE = String.raw`(?:\d{4}-\d{2}-\d{2}|\d{4}/\d{1,2}/\d{1,2}|\d{1,2}[./\-]\d{1,2}[./\-](?:\d{4}|\d{2})|\d{1,2}-(?:${MONTHS})\.?-(?:\d{4}|\d{2})|\d{1,2}(?:st|nd|rd|th|er)?\.?\s+(?:of\s+|de\s+)?(?:${MONTHS})\.?,?\s+(?:de\s+)?\d{4}|(?:${MONTHS})\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})`
const DOB = new RegExp(`${CUE}\\s*(?:[:\\-–]|is|was|on|am|le|el|il)?\\s*(?:the\\s+)?(${DATE})(?![\\p{L}\\p{N}])`, "giu")

// The cue after the date: "wurde am 13. August 1989 in Graz geboren", "is op 3 maart 1980 geboren".
const DOB_CUE_AFTER = new RegExp(`\\b(?:am|op)\\s+(${DATE})(?:\\s+(?:in|te|en|à|a)\\s+[\\p{L}\\-]+(?:\\s+[\\p{L}\\-]+)?)?\\s+(?:geboren|born)\\b`, "giu")

// What was "born" is not always a person: "Le projet est né le 6 mai 2019", "the company was born on ...".
const NON_PERSON_SUBJECT =
  /\b(?:project|projet|proyecto|progetto|projekt|idea|idée|idee|company|société|entreprise|empresa|azienda|unternehmen|firma|bedrijf|association|asociación|associazione|verein|vereniging|festival|movement|mouvement|movimiento|movimento|bewegung|beweging|brand|marque|marca|marke|merk|product|produit|producto|prodotto|produkt|startup|start-up|band|groupe|group|grupo|gruppo|gruppe|groep|club|journal|magazine|site|website|app|application|service|concept|programme|program|programa|programma|software|logiciel)\s+(?:(?:est|était|a\s+été|was|is|es|fue|è|era|ist|war|wurde)\s+)?$/iu

const DATE_ALONE = new RegExp(`(?<![\\p{L}\\p{N}])${DATE}(?![\\p{L}\\p{N}])`, "iu")

const plausible = (date: string): boolean => {
  const numbers = date.match(/\d+/g)?.map(Number) ?? []
  const year = numbers.find((n) => n > 31) ?? numbers[numbers.length - 1]
  return numbers.every((n) => n >= 0) && year !== undefined && (year < 100 || (year >= 1900 && year <= 2100))
}

/** Dates in fields labelled as birth dates (a "dob" column, a `birth_date` key, "Geburtsdatum:"). */
const labelledDates = (text: string): Array<Span> =>
  fieldsOfKind(text, "dob").flatMap((f) => {
    const m = DATE_ALONE.exec(text.slice(f.start, f.end))
    return m !== null && plausible(m[0]) ? [{ start: f.start + m.index, end: f.start + m.index + m[0].length, type: "DATE_OF_BIRTH" as const }] : []
  })

export const dateOfBirthDetector: Detector = {
  type: "DATE_OF_BIRTH",
  detect: (text) => [
    ...spansFromRegex(text, DOB, "DATE_OF_BIRTH", (m) => {
      const date = m[1]!
      if (!plausible(date) || NON_PERSON_SUBJECT.test(textBefore(text, m.index, 40))) return undefined
      const start = m.index + m[0].length - date.length
      const end = m.index + m[0].length
      // A cue at the end of one line does not reach into a table cell or field of another kind below it
      // ("...,né le\n2026-03-08,..." is a header then a creation date).
      if (m[0].includes("\n") && fieldAt(text, start, end) !== undefined && fieldKindAt(text, start, end) !== "dob") return undefined
      return { start, end }
    }),
    ...spansFromRegex(text, DOB_CUE_AFTER, "DATE_OF_BIRTH", (m) => {
      const date = m[1]!
      const start = m.index + m[0].indexOf(date, 2)
      return plausible(date) && !m[0].includes("\n") ? { start, end: start + date.length } : undefined
    }),
    ...labelledDates(text)
  ]
}
