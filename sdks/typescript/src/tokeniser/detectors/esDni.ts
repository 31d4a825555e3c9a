import { followsNonPersonalLabel } from "./context.ts"
import { spansFromRegex, type Detector } from "./Detector.ts"

const CHECK_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"

/** DNI: 8 digits + letter; NIE: X/Y/Z + 7 digits + letter (X=0, Y=1, Z=2). Letter = table[n mod 23]. */
export const isValidEsDni = (value: string): boolean => {
  const v = value.toUpperCase().replace(/[\s\-]/g, "")
  const m = /^([XYZ]|\d)(\d{7})([A-Z])$/.exec(v)
  if (m === null) return false
  const lead = m[1] === "X" ? "0" : m[1] === "Y" ? "1" : m[1] === "Z" ? "2" : m[1]!
  return CHECK_LETTERS[Number(lead + m[2]) % 23] === m[3]
}

const DNI = /(?<![\p{L}\p{N}])(?:[XYZxyz][\- ]?\d{7}|\d{8})[\- ]?[A-Za-z](?![\p{L}\p{N}])/gu

export const esDniDetector: Detector = {
  type: "ES_DNI",
  detect: (text) =>
    spansFromRegex(text, DNI, "ES_DNI", (m) =>
      // An order number that happens to end in its mod-23 letter ("Pedido 12345678Z") is a reference.
      isValidEsDni(m[0]) && !followsNonPersonalLabel(text, m.index) ? { start: m.index, end: m.index + m[0].length } : undefined
    )
}
