import { spansFromRegex, type Detector } from "./Detector.ts"

// Passport numbers have no common check rule across countries (6-9 letters and digits), so they are
// recognised only after a passport cue. The token must contain a digit, so words are never taken.
const PASSPORT =
  /\b(?:passport|passeport|reisepass|pasaporte|passaporto|paspoort)(?:\s*(?:no\.?|nr\.?|number|num\.?|n[º°o.]\.?|#|nummer|número|numéro|numero|id))?\s*(?:[:#]|is)?\s*([A-Z0-9]{6,9})(?![\p{L}\p{N}])/giu

export const passportDetector: Detector = {
  type: "PASSPORT",
  detect: (text) =>
    spansFromRegex(text, PASSPORT, "PASSPORT", (m) => {
      const value = m[1]!
      if (!/\d/.test(value) || value !== value.toUpperCase()) return undefined
      const start = m.index + m[0].length - value.length
      return { start, end: start + value.length }
    })
}
