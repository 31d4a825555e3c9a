import { followsNonPersonalLabel } from "./context.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"

// HMRC rules: first letter not D, F, I, Q, U, V; second letter not D, F, I, O, Q, U, V; prefixes BG, GB,
// KN, NK, NT, TN and ZZ are never issued; suffix A-D. Printed with or without spaces: "AB 12 34 56 C",
// "AB123456C", or with the digits in one block: "AB 123456 C".
const NINO =
  /(?<![\p{L}\p{N}])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?![\p{L}\p{N}])/gu
const NEVER_ISSUED = new Set(["BG", "GB", "KN", "NK", "NT", "TN", "ZZ"])

export const ukNinoDetector: Detector = {
  type: "UK_NINO",
  detect: (text) =>
    spansFromRegex(text, NINO, "UK_NINO", (m) => {
      // A serial, part or order number shaped like a NINO ("serial ZM452778C") is a reference.
      if (NEVER_ISSUED.has(m[1]!) || followsNonPersonalLabel(text, m.index)) return undefined
      // Spacing must be all-or-nothing between the digit pairs, as HMRC prints it.
      const spaced = m[0].replace(/[A-Z]/g, "").split(" ").length
      const blockLayout = / \d{6} [A-D]$/.test(m[0])
      if (spaced !== 1 && spaced !== 5 && !blockLayout) return undefined
      return { start: m.index, end: m.index + m[0].length }
    })
}
