/**
 * Runs of digit groups joined by ONE kind of separator (single spaces or single dashes), as printed on cards and
 * receipts, found in one linear pass. This is exactly what the regex
 * `/(?<![\d\-+])\d+(?:(?: \d+)+|(?:-\d+)+)?(?![\d]|-\d)/g` matches (test/sdks/typescript/tokeniser/detectors/
 * digitGroupRuns.test.ts holds the two to each other on random texts), without its cost: V8 keeps one backtracking
 * entry per repetition of the group, and a few million groups ("12 12 12 ...", a 10 MB prompt) overflowed its stack
 * ("Maximum call stack size exceeded") and took the whole request down.
 */

/** The digit groups of one run, with their offsets in the text. */
export interface DigitGroup {
  readonly start: number
  readonly end: number
  readonly text: string
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57
const SPACE = 32
const DASH = 45
const PLUS = 43

/** End of the digits starting at `at` (the index of the first non-digit). */
const digitsEnd = (text: string, at: number): number => {
  let i = at
  while (i < text.length && isDigit(text.charCodeAt(i))) i++
  return i
}

/** Every run in `text`, in order, as its groups. A run after "+" (an international phone number) is not one. */
export const digitGroupRuns = (text: string): Array<Array<DigitGroup>> => {
  const runs: Array<Array<DigitGroup>> = []
  let i = 0
  while (i < text.length) {
    if (!isDigit(text.charCodeAt(i))) {
      i++
      continue
    }
    const before = i > 0 ? text.charCodeAt(i - 1) : -1
    const firstEnd = digitsEnd(text, i)
    // Inside a longer token ("-12", "+49 ..."): none of these digits can start a run.
    if (before === DASH || before === PLUS) {
      i = firstEnd
      continue
    }
    const groups: Array<DigitGroup> = [{ start: i, end: firstEnd, text: text.slice(i, firstEnd) }]
    let end = firstEnd
    const separator = text.charCodeAt(end)
    if ((separator === SPACE || separator === DASH) && isDigit(text.charCodeAt(end + 1))) {
      while (text.charCodeAt(end) === separator && isDigit(text.charCodeAt(end + 1))) {
        const groupEnd = digitsEnd(text, end + 1)
        groups.push({ start: end + 1, end: groupEnd, text: text.slice(end + 1, groupEnd) })
        end = groupEnd
      }
      // A space-joined run directly followed by "-<digit>": its last group belongs to the dashed number after it.
      if (separator === SPACE && text.charCodeAt(end) === DASH && isDigit(text.charCodeAt(end + 1))) {
        groups.pop()
        end = groups[groups.length - 1]!.end
      }
    }
    runs.push(groups)
    i = end
  }
  return runs
}
