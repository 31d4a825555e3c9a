// tokeniser-large.json: pathological long inputs (one short unit repeated millions of times, then a real value) that
// once overflowed a backtracking regex engine's stack (V8: "Maximum call stack size exceeded") or hit its match limit
// (PCRE2, read as "no match" by the Rust engine, so the values after the run were missed). Stored as unit, count and
// tail, not as text: each engine builds `unit.repeat(times) + tail` and must find exactly these spans, with no error.
import { createSession } from "../../typescript/src/tokeniser/session.ts"
import { detectSpans } from "../../typescript/src/tokeniser/tokeniseText.ts"

const CASES: ReadonlyArray<{ readonly name: string; readonly unit: string; readonly times: number; readonly tail: string }> = [
  // Ten million characters of dot-joined letters: an e-mail local part of five million dot-atoms, as far as the regex
  // can tell, until no "@" comes. The address after it is still found.
  { name: "10 MB of \"a.\" then an e-mail address", unit: "a.", times: 5_000_000, tail: " Mail jane.doe@example.com please." },
  // PCRE2 (the Rust engine, and through it Go, Java, PHP and Ruby) hit its limit at about a hundred thousand repeats:
  // the e-mail pattern on a dotted run, the card pattern on digit groups joined by one kind of separator.
  { name: "200 KB of \"a.\" then an e-mail address", unit: "a.", times: 100_000, tail: " Mail jane.doe@example.com please." },
  { name: "200 KB of space-joined digits then a card", unit: "1 ", times: 100_000, tail: "\nCard 4111 1111 1111 1111." },
  { name: "200 KB of dash-joined digits then a card", unit: "1-", times: 100_000, tail: "\nCard 4111-1111-1111-1111." }
]

export const buildTokeniserLargeVectors = async () => {
  const cases = []
  for (const c of CASES) {
    const text = c.unit.repeat(c.times) + c.tail
    const spans = await detectSpans(text, createSession({ names: "off" }))
    cases.push({ ...c, spans: spans.map((s) => ({ start: s.start, end: s.end, type: s.type, value: text.slice(s.start, s.end) })) })
  }
  return {
    description:
      "Pathological long inputs for the structured detectors (name model off): the text of each case is `unit` repeated `times` times followed by `tail`. An engine must find exactly `spans` (offsets into that text, UTF-16 code units, all ASCII here) without an error: no stack overflow, no regex resource limit read as \"no match\". Generated from the reference engine.",
    version: 1,
    engine_settings: { names: "off", phone_regions: ["US", "GB", "FR", "DE", "ES", "NL"] },
    cases
  }
}
