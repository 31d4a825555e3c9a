import { textBefore } from "./context.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"
import { fieldKindAt, mentionedBefore } from "./fieldKinds.ts"

/** Dutch citizen service number: 9 digits passing the "11-proof" (9*d1 + 8*d2 + ... + 2*d8 - d9 ≡ 0 mod 11). */
export const isValidBsn = (digits: string): boolean => {
  if (!/^\d{9}$/.test(digits) || digits === "000000000") return false
  let sum = 0
  for (let i = 0; i < 8; i++) sum += (9 - i) * Number(digits[i])
  sum -= Number(digits[8])
  return sum % 11 === 0
}

// One random 9-digit number in eleven passes the 11-proof, so a plain BSN is only recognised after a cue
// naming it (BSN, burgerservicenummer, sofinummer, citizen service number) or in a field labelled so.
// The dotted layout "1234.56.782" is the BSN's own way of being printed and is taken without a cue.
const BSN_CUE =
  /\b(?:bsn|burgerservicenummer|burger ?service ?nummer|sofinummer|sofi-nummer|citizen service number)\b[\s-]*(?:nr\.?|nummer|number|no\.?|is|:)?\s*[:#]?\s*$/i
const BSN = /(?<![\p{L}\p{N}.])(\d{4})([. ]?)(\d{2})\2(\d{3})(?![\p{N}]|[.]\d)/gu

export const nlBsnDetector: Detector = {
  type: "NL_BSN",
  detect: (text) =>
    spansFromRegex(text, BSN, "NL_BSN", (m) =>
      isValidBsn(m[1]! + m[3]! + m[4]!) &&
      (m[2] === "." || BSN_CUE.test(textBefore(text, m.index, 50)) || mentionedBefore("bsn", text, m.index) || fieldKindAt(text, m.index, m.index + m[0].length) === "bsn")
        ? { start: m.index, end: m.index + m[0].length }
        : undefined
    )
}
