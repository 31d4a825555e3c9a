import { spansFromRegex, type Detector } from "./Detector.ts"

// Local part: dot-atoms (no leading, trailing or doubled dots). Domain: LDH labels and an alphabetic TLD.
// The lookbehind keeps us from starting in the middle of a longer token; a sentence-final dot is not
// part of the domain because the TLD must be letters followed by a non-label character.
// Letters of any script are allowed in both parts (internationalised addresses, RFC 6531: "josé@café.example").
// The repeated parts are bounded, well beyond what an address can hold (a local part has at most 64 characters, so
// at most 32 dot-atoms; a domain at most 255, so at most 127 labels): V8 keeps one backtracking entry per
// repetition, and an unbounded `(...)*` overflowed its stack on a few million "a." (a 12 MB prompt), failing the
// whole request.
const EMAIL =
  /(?<![\p{L}\p{N}\p{M}._%+\-])[\p{L}\p{M}\p{N}_%+\-]+(?:\.[\p{L}\p{M}\p{N}_%+\-]+){0,255}@(?:[\p{L}\p{N}](?:[\p{L}\p{M}\p{N}\-]{0,61}[\p{L}\p{M}\p{N}])?\.){1,127}\p{L}[\p{L}\p{M}]{1,62}(?![\p{L}\p{M}\p{N}\-]|\.[\p{L}\p{N}])/gu

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
