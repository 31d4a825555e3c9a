import { followsNonPersonalLabel, textBefore } from "./context.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"
import { wholeValueKindAt, fieldKindAt } from "./fieldKinds.ts"

/** SSA rules: area not 000, 666 or 900-999; group not 00; serial not 0000. */
export const isValidSsn = (area: string, group: string, serial: string): boolean => {
  const a = Number(area)
  return a !== 0 && a !== 666 && a < 900 && group !== "00" && serial !== "0000"
}

// Printed form AAA-GG-SSSS (or with spaces). Nine bare digits are only an SSN after an SSN cue, since
// a bare 9-digit run is just as likely an order number, a Dutch BSN or a phone number.
const SSN_PRINTED = /(?<![\d\-])(\d{3})([\- ])(\d{2})\2(\d{4})(?![\d]|-\d)/g
const SSN_BARE = /(?<![\d\-])(\d{3})(\d{2})(\d{4})(?![\d]|-\d)/g
const SSN_CUE = /\b(?:ssn|social security(?: number| no\.?)?|soc\.? sec\.?(?: no\.?)?)\s*(?:#|no\.?|number)?\s*[:#]?\s*$/i

export const usSsnDetector: Detector = {
  type: "US_SSN",
  detect: (text) => [
    ...spansFromRegex(text, SSN_PRINTED, "US_SSN", (m) =>
      isValidSsn(m[1]!, m[3]!, m[4]!) && !followsNonPersonalLabel(text, m.index) &&
      wholeValueKindAt(text, m.index, m.index + m[0].length) !== "reference" && !/[\p{L}]$/u.test(text.slice(0, m.index))
        ? { start: m.index, end: m.index + m[0].length }
        : undefined
    ),
    ...spansFromRegex(text, SSN_BARE, "US_SSN", (m) =>
      isValidSsn(m[1]!, m[2]!, m[3]!) &&
      (SSN_CUE.test(textBefore(text, m.index, 40)) || fieldKindAt(text, m.index, m.index + 9) === "ssn")
        ? { start: m.index, end: m.index + m[0].length }
        : undefined
    )
  ]
}
