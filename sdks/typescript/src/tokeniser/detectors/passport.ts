import type { Span } from "../types.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"
import { fieldsOfKind, mentionedBefore } from "./fieldKinds.ts"

// Passport numbers have no common check rule across countries (6-9 letters and digits), so they are
// recognised only after a passport cue or in a field labelled as one. The token must contain a digit,
// so words are never taken.
const PASSPORT =
  /(?:\b(?:n[º°o]\.?\s*(?:de\s+)?)?(?:passport|passeport|reisepass|pass|pasaporte|passaporto|passaporte|paspoort)(?:nummer|nr\.?|nummer)?(?:\s*-?\s*(?:no\.?|nr\.?|number|num\.?|n[º°o.]\.?|#|nummer|número|numéro|numero|id))?\s*(?:[:#]|is|lautet)?\s*)([A-Z0-9]{6,9})(?![\p{L}\p{N}])/giu
const PASSPORT_CUE_WORD = /(?:passport|passeport|reisepass|pasaporte|passaporto|passaporte|paspoort|pass-?(?:nr|nummer))/i
const TOKEN = /(?<![\p{L}\p{N}])[A-Z0-9]{6,9}(?![\p{L}\p{N}])/u
const TOKENS = new RegExp(TOKEN.source, "gu")

const acceptable = (value: string): boolean => /\d/.test(value) && value === value.toUpperCase()

export const passportDetector: Detector = {
  type: "PASSPORT",
  detect: (text) => [
    ...spansFromRegex(text, PASSPORT, "PASSPORT", (m) => {
      const value = m[1]!
      if (!acceptable(value) || !PASSPORT_CUE_WORD.test(m[0])) return undefined
      const start = m.index + m[0].length - value.length
      return { start, end: start + value.length }
    }),
    // A passport cue earlier in the sentence: "Número de pasaporte de Lucía: X1234567".
    ...spansFromRegex(text, TOKENS, "PASSPORT", (m) =>
      acceptable(m[0]) && mentionedBefore("passport", text, m.index)
        ? { start: m.index, end: m.index + m[0].length }
        : undefined
    ),
    ...fieldsOfKind(text, "passport").flatMap((f): Array<Span> => {
      const m = TOKEN.exec(text.slice(f.start, f.end))
      return m !== null && acceptable(m[0]) ? [{ start: f.start + m.index, end: f.start + m.index + m[0].length, type: "PASSPORT" }] : []
    })
  ]
}
