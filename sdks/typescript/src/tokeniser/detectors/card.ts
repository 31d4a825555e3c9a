import { followsNonPersonalLabel, isDelimited } from "./context.ts"
import type { Span } from "../types.ts"
import type { Detector } from "./Detector.ts"
import { wholeValueKindAt, fieldKindAt } from "./fieldKinds.ts"
import { passesLuhn } from "./luhn.ts"
import { type DigitGroup, digitGroupRuns } from "./digitGroupRuns.ts"

interface Scheme {
  readonly name: string
  readonly matches: (digits: string) => boolean
  readonly lengths: ReadonlyArray<number>
}

const prefixIn = (digits: string, width: number, low: number, high: number): boolean => {
  const p = Number(digits.slice(0, width))
  return p >= low && p <= high
}

const range = (from: number, to: number): Array<number> => Array.from({ length: to - from + 1 }, (_, i) => from + i)

/** Issuer identification ranges and lengths of the schemes we recognise. */
const SCHEMES: ReadonlyArray<Scheme> = [
  { name: "visa", matches: (d) => d.startsWith("4"), lengths: [13, 16, 19] },
  {
    name: "mastercard",
    matches: (d) => prefixIn(d, 2, 51, 55) || prefixIn(d, 4, 2221, 2720),
    lengths: [16]
  },
  { name: "amex", matches: (d) => d.startsWith("34") || d.startsWith("37"), lengths: [15] },
  {
    name: "discover",
    matches: (d) => d.startsWith("6011") || d.startsWith("65") || prefixIn(d, 3, 644, 649),
    lengths: range(16, 19)
  },
  { name: "jcb", matches: (d) => prefixIn(d, 4, 3528, 3589), lengths: range(16, 19) },
  { name: "diners", matches: (d) => d.startsWith("36") || prefixIn(d, 3, 300, 305), lengths: range(14, 19) },
  { name: "unionpay", matches: (d) => d.startsWith("62"), lengths: range(16, 19) }
]

export const cardScheme = (digits: string): string | undefined =>
  SCHEMES.find((s) => s.matches(digits) && s.lengths.includes(digits.length))?.name

export const isValidCardNumber = (digits: string): boolean =>
  /^\d{13,19}$/.test(digits) && cardScheme(digits) !== undefined && passesLuhn(digits)

// Runs of digit groups joined by ONE kind of separator (none, single spaces, or single dashes), as printed on
// cards and receipts (digitGroupRuns.ts). The whole run is validated; we never look for a card inside a longer
// number. A run after "+" is an international phone number ("+49 157 76849593" is also a Luhn-valid 13-digit Visa
// shape).

const CHAR_2 = 50
const CHAR_6 = 54

/** A card has at most 19 digits and every group at least one, so no window of more groups can be a card. */
const MAX_GROUPS = 19

/**
 * The longest contiguous run of groups that is a valid card (the leftmost of the longest), then the same on the
 * groups left and right of it: "4111 1111 1111 1111 2" still finds the card, two cards separated by one space are
 * both found, while a card is never carved out of the inside of one unseparated number.
 *
 * Every window of up to 19 groups is judged once; each range then takes the first valid window of the largest size
 * inside it by binary search, iteratively. Linear-logarithmic in the number of groups: searching every size of
 * every sub-range again (the former way) never finished on a few thousand digit groups ("12 12 12 ...").
 */
const cardsIn = (text: string, groups: ReadonlyArray<DigitGroup>): Array<Span> => {
  const n = groups.length
  // Prefix sums: digits up to group i, and groups that are not printed like card groups (2 to 8 digits).
  const digits = [0]
  const unprinted = [0]
  for (const g of groups) {
    digits.push(digits[digits.length - 1]! + g.text.length)
    unprinted.push(unprinted[unprinted.length - 1]! + (g.text.length < 2 || g.text.length > 8 ? 1 : 0))
  }
  const startsBySize = new Map<number, Array<number>>()
  for (let size = 1; size <= Math.min(n, MAX_GROUPS); size++) {
    const valid: Array<number> = []
    for (let i = 0; i + size <= n; i++) {
      const count = digits[i + size]! - digits[i]!
      if (count < 13 || count > 19) continue
      // Groups must look like card printing (2 to 8 digits each), not a list of separate numbers.
      if (size > 1 && unprinted[i + size]! - unprinted[i]! > 0) continue
      // Every scheme's issuer range starts with 2 to 6 (SCHEMES): skip the join and the checks for any other
      // first digit, which long runs of other numbers ("12 12 12 ...") would otherwise pay millions of times.
      const lead = groups[i]!.text.charCodeAt(0)
      if (lead < CHAR_2 || lead > CHAR_6) continue
      const chosen = groups.slice(i, i + size)
      if (!isValidCardNumber(chosen.map((g) => g.text).join(""))) continue
      const start = chosen[0]!.start
      const end = chosen[size - 1]!.end
      if (!isDelimited(text, start, end) || followsNonPersonalLabel(text, start)) continue
      // Under an order/invoice/id column or key the number is a reference, like after "Order #".
      if (wholeValueKindAt(text, start, end) === "reference") continue
      valid.push(i)
    }
    if (valid.length > 0) startsBySize.set(size, valid)
  }
  const sizes = [...startsBySize.keys()].sort((a, b) => b - a)
  const found: Array<Span> = []
  const stack: Array<readonly [number, number] | Span> = [[0, n]]
  while (stack.length > 0) {
    const item = stack.pop()!
    if (!Array.isArray(item)) {
      found.push(item as Span)
      continue
    }
    const [lo, hi] = item as readonly [number, number]
    for (const size of sizes) {
      const starts = startsBySize.get(size)!
      let a = 0
      let b = starts.length
      while (a < b) {
        const mid = (a + b) >> 1
        if (starts[mid]! < lo) a = mid + 1
        else b = mid
      }
      const i = starts[a]
      if (i !== undefined && i + size <= hi) {
        stack.push([i + size, hi], { start: groups[i]!.start, end: groups[i + size - 1]!.end, type: "CARD" }, [lo, i])
        break
      }
    }
  }
  return found
}

export const cardDetector: Detector = {
  type: "CARD",
  detect: (text) => digitGroupRuns(text).flatMap((groups) => cardsIn(text, groups))
}
