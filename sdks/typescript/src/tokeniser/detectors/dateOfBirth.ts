import type { Span } from "../types.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"
import { fieldAt } from "./fields.ts"
import { fieldKindAt, fieldsOfKind } from "./fieldKinds.ts"

// A date is personal data here only when introduced as a birth date; other dates (invoices,
// timestamps, deadlines) are left alone. The span is the date itself, not the cue.
const CUE =
  String.raw`(?:\bborn(?:\s+on)?|\bd\.?o\.?b\.?|\bdate\s+of\s+birth|\bbirth\s?date|\bbirthday(?:\s+is)?|\bn[ée]e?(?:\s?\(e\))?\s+le|\bgeb\.(?:\s*-?\s*datum|\s+am)?|\bgeb\.?\s+am|\bdate\s+de\s+naissance|\bgeboren(?:\s+am)?|\bgeburtsdatum|\bfecha\s+de\s+nacimiento|\bnacid[oa]\s+el|\bf\.\s*nacimiento|\bfecha\s+nacimiento|\bdata\s+di\s+nascita|\bnato\s+il|\bnata\s+il|\bgeboortedatum|\bgeboren\s+op)`
const MONTHS =
  "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|januar|februar|märz|maerz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari|februari|maart|mei|augustus"
const DATE = String.raw`(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./\-]\d{1,2}[./\-](?:\d{4}|\d{2})|\d{1,2}\.?\s+(?:de\s+)?(?:${MONTHS})\.?,?\s+(?:de\s+)?\d{4}|(?:${MONTHS})\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})`
const DOB = new RegExp(`${CUE}\\s*(?:[:\\-–]|is|was|on|am|le|el|il)?\\s*(${DATE})(?![\\p{L}\\p{N}])`, "giu")

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
      if (!plausible(date)) return undefined
      const start = m.index + m[0].length - date.length
      const end = m.index + m[0].length
      // A cue at the end of one line does not reach into a table cell or field of another kind below it
      // ("...,né le\n2026-03-08,..." is a header then a creation date).
      if (m[0].includes("\n") && fieldAt(text, start, end) !== undefined && fieldKindAt(text, start, end) !== "dob") return undefined
      return { start, end }
    }),
    ...labelledDates(text)
  ]
}
