import { spansFromRegex, type Detector } from "./Detector.ts"

// Local part: dot-atoms (no leading, trailing or doubled dots). Domain: LDH labels and an alphabetic TLD.
// The lookbehind keeps us from starting in the middle of a longer token; a sentence-final dot is not
// part of the domain because the TLD must be letters followed by a non-label character.
const EMAIL =
  /(?<![\p{L}\p{N}._%+\-])[A-Za-z0-9_%+\-]+(?:\.[A-Za-z0-9_%+\-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?![\p{L}\p{N}\-]|\.[A-Za-z0-9])/gu

export const emailDetector: Detector = {
  type: "EMAIL",
  detect: (text) =>
    spansFromRegex(text, EMAIL, "EMAIL", (m) => {
      const end = m.index + m[0].length
      // "git@github.com:org/repo.git" is an scp-style remote (user@host:path), not a mailbox.
      if (/^:[^\s]/.test(text.slice(end, end + 2))) return undefined
      return { start: m.index, end }
    })
}
