import nlp from "compromise"
import type { NameModel } from "./NameModel.ts"
import type { Span } from "./types.ts"

interface CompromisePerson {
  readonly text: string
  readonly offset: { readonly start: number; readonly length: number }
}

// compromise includes honorifics ("Dr. Chen") and may end a match on punctuation; the personal data is
// the name itself, and a title left readable helps the model.
const HONORIFIC = /^(?:(?:mr|mrs|ms|mx|dr|prof|sir|dame|madame|mme|mlle|monsieur|herr|frau|señor|señora|sr|sra)\.?\s+)+/i
const TRAILING = /[\s.,;:!?'"’)]+$/u

/** Finds names in `text` with compromise's `people()`; runs in-process, nothing leaves the device. */
export const detectNamesWithCompromise = (text: string): Array<Span> => {
  const people = nlp(text).people().json({ offset: true }) as ReadonlyArray<CompromisePerson>
  const spans: Array<Span> = []
  for (const p of people) {
    let start = p.offset.start
    let end = p.offset.start + p.offset.length
    const surface = text.slice(start, end)
    const lead = HONORIFIC.exec(surface)?.[0].length ?? 0
    const trail = TRAILING.exec(surface)?.[0].length ?? 0
    start += lead
    end -= trail
    // Possessive "Alice's": the name is "Alice".
    if (/['’]s$/.test(text.slice(start, end))) end -= 2
    if (end > start && /\p{Lu}/u.test(text[start] ?? "")) spans.push({ start, end, type: "PERSON" })
  }
  return spans
}

export const builtinNameModel: NameModel = {
  detect: async (text) => detectNamesWithCompromise(text)
}
