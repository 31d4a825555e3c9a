import { followsNonPersonalLabel, isDelimited } from "./context.ts"
import type { Span } from "../types.ts"
import type { Detector } from "./Detector.ts"
import { wholeValueKindAt, fieldKindAt } from "./fieldKinds.ts"
import { passesLuhn } from "./luhn.ts"

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

// Digit groups joined by ONE kind of separator (none, single spaces, or single dashes), as printed on
// cards and receipts. The whole run is validated; we never look for a card inside a longer number. A run
// after "+" is an international phone number ("+49 157 76849593" is also a Luhn-valid 13-digit Visa shape).
const CARD_CANDIDATE = /(?<![\d\-+])\d+(?:(?: \d+)+|(?:-\d+)+)?(?![\d]|-\d)/g

/** Groups of one separator-joined digit run, with their offsets. */
const groupsOf = (run: string, offset: number): Array<Group> => {
  const groups: Array<Group> = []
  const re = /\d+/g
  for (let g = re.exec(run); g !== null; g = re.exec(run)) {
    groups.push({ start: offset + g.index, end: offset + g.index + g[0].length, text: g[0] })
  }
  return groups
}

type Group = { start: number; end: number; text: string }

/**
 * The longest contiguous run of groups that is a valid card, then the same on the groups left and
 * right of it: "4111 1111 1111 1111 2" still finds the card, two cards separated by one space are both
 * found, while a card is never carved out of the inside of one unseparated number.
 */
const cardsIn = (text: string, groups: ReadonlyArray<Group>): Array<Span> => {
  for (let size = groups.length; size >= 1; size--) {
    for (let i = 0; i + size <= groups.length; i++) {
      const chosen = groups.slice(i, i + size)
      // Groups must look like card printing (2 to 8 digits each), not a list of separate numbers.
      if (size > 1 && chosen.some((g) => g.text.length < 2 || g.text.length > 8)) continue
      if (!isValidCardNumber(chosen.map((g) => g.text).join(""))) continue
      const start = chosen[0]!.start
      const end = chosen[size - 1]!.end
      if (!isDelimited(text, start, end) || followsNonPersonalLabel(text, start)) continue
      // Under an order/invoice/id column or key the number is a reference, like after "Order #".
      if (wholeValueKindAt(text, start, end) === "reference") continue
      return [...cardsIn(text, groups.slice(0, i)), { start, end, type: "CARD" }, ...cardsIn(text, groups.slice(i + size))]
    }
  }
  return []
}

export const cardDetector: Detector = {
  type: "CARD",
  detect: (text) => [...text.matchAll(CARD_CANDIDATE)].flatMap((m) => cardsIn(text, groupsOf(m[0], m.index)))
}
