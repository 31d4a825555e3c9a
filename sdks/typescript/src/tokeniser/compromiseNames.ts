import nlp from "compromise"
import type { NameModel } from "./NameModel.ts"
import { combineNames } from "./names/nameRules.ts"
import { scanInWindows } from "./textWindows.ts"
import type { Span } from "./types.ts"

interface CompromiseMatch {
  readonly offset: { readonly start: number; readonly length: number }
}

// compromise includes honorifics ("Dr. Chen") and may end a match on punctuation; the personal data is
// the name itself, and a title left readable helps the model.
const HONORIFIC = /^(?:(?:mr|mrs|ms|mx|dr|prof|sir|dame|madame|mme|mlle|monsieur|herr|frau|señor|señora|sr|sra)\.?\s+)+/i
const TRAILING = /[\s.,;:!?'"’)]+$/u

// Offsets without the per-term description (`terms: false` works but is missing from compromise's types).
const OFFSETS_ONLY = { offset: true, terms: false } as unknown as { readonly offset: true }

const PERSON = "#Honorific+? #Person+"

/**
 * The matches of compromise's `people()`, found the way it finds them (people/find.js: split after
 * commas, an optional honorific and a run of #Person terms, split after a possessive), but without
 * `people().json()`, which also parses every match into first/last name and guesses a gender: about a
 * third of the time, for nothing we use. `nlp.lazy` tokenises the text and tags only what the match
 * needs, instead of every analysis `nlp(text)` runs: the same matches (checked on the 1,800 texts of
 * the labelled corpora) for about a fifth less time.
 */
const personMatches = (text: string): ReadonlyArray<CompromiseMatch> => {
  const candidates = nlp.lazy(text, PERSON).splitAfter("@hasComma").match(PERSON)
  const possessive = candidates.match("#Possessive").ifNo("(his|her)")
  return candidates.splitAfter(possessive).json(OFFSETS_ONLY) as ReadonlyArray<CompromiseMatch>
}

/**
 * Finds names in `text` with compromise; runs in-process, nothing leaves the device. Its matcher's cost
 * grows faster than linearly with the length of `text`: builtinNameModel calls it on windows of a few KB,
 * never on a whole long text.
 */
export const detectNamesWithCompromise = (text: string): Array<Span> => {
  const people = personMatches(text)
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

/**
 * The opt-in `compromise` name model: compromise's names, found window by window (textWindows.ts: its cost grows
 * faster than linearly with the length of what it is given), refined and combined with the portable model's
 * names (names/nameRules.ts), which read the whole text: a `name` column's header may be far above its values.
 * Loaded on first use by compromiseNameModel.ts.
 */
export const detectCompromiseNames: NameModel["detect"] = async (text, options) =>
  combineNames(text, await scanInWindows(text, detectNamesWithCompromise, { signal: options?.signal }))
