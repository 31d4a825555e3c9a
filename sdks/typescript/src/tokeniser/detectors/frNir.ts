import { spansFromRegex, type Detector } from "./Detector.ts"

/**
 * French social security number (NIR): sex (1/2), year, month (01-12, or 20-42 / 50-99 for
 * unknown months), department (2 digits or 2A/2B for Corsica), commune (3), order (3), then a
 * 2-digit key = 97 - (13-digit number mod 97). Corsica: 2A counts as 19, 2B as 18 for the key.
 */
export const isValidFrNir = (value: string): boolean => {
  const v = value.toUpperCase().replace(/[\s.]/g, "")
  const m = /^([12])(\d{2})(\d{2})(\d{2}|2A|2B)(\d{3})(\d{3})(\d{2})$/.exec(v)
  if (m === null) return false
  const month = Number(m[3])
  if (!((month >= 1 && month <= 12) || (month >= 20 && month <= 42) || (month >= 50 && month <= 99))) return false
  const dept = m[4] === "2A" ? "19" : m[4] === "2B" ? "18" : m[4]!
  const body = BigInt(m[1]! + m[2]! + m[3]! + dept + m[5]! + m[6]!)
  const key = 97n - (body % 97n)
  return key === BigInt(m[7]!)
}

// Printed grouped "1 85 05 78 006 084 36" (spaces or dots) or as 15 contiguous characters.
const NIR =
  /(?<![\p{L}\p{N}])[12](?:([ .]?)\d{2}\1\d{2}\1(?:\d{2}|2[AB])\1\d{3}\1\d{3}\1\d{2})(?![\p{L}\p{N}])/gu

export const frNirDetector: Detector = {
  type: "FR_NIR",
  detect: (text) =>
    spansFromRegex(text, NIR, "FR_NIR", (m) =>
      isValidFrNir(m[0]) ? { start: m.index, end: m.index + m[0].length } : undefined
    )
}
