import { fieldAt, fieldsOf } from "../detectors/fields.ts"
import type { Span } from "../types.ts"
import {
  ALONE_NOT_A_NAME,
  AMBIGUOUS,
  ARTICLES,
  CALENDAR,
  CAPITALISED_PARTICLES,
  COMMON_WORDS,
  GIVEN,
  GREETINGS,
  INTRODUCER,
  isNameLabel,
  isNotANameLabel,
  MAIL_HEADER,
  PARTICLES,
  PLACE,
  PLACE_PREFIXES,
  POSSESSIVE_LINKS,
  SIGN_OFF,
  STOP,
  SURNAME,
  TITLES
} from "./nameModelData.ts"

/**
 * The portable name model: person names by gazetteers, capitalisation, position and per-language cue words, all
 * read from sdks/vectors/name-model.json (nameModelData.ts), the same data the Python and Rust engines read.
 * Given names and surnames of many locales (faker and compromise's lexicon), names that are also ordinary words
 * (never a name alone), titles, greetings, sign-offs, phrases that introduce a person, labelled fields (table
 * headers, JSON keys, form labels) and negative lists (places, months and weekdays that are also names, brands).
 * Linear in the text: one pass over its words plus set look-ups.
 */

interface Word {
  readonly text: string
  readonly start: number
  readonly end: number
}

const CAPITALISED = /^(?:\p{Lu}\p{Ll}|\p{Lu}['’]\p{Lu}\p{Ll})/u
const isCapitalised = (w: string): boolean => CAPITALISED.test(w)
const base = (w: string): string => (w.endsWith("'s") || w.endsWith("’s") ? w.slice(0, -2) : w)
const lower = (w: string): string => w.toLowerCase()
const isGiven = (w: string): boolean => GIVEN.has(w) || (w.includes("-") && w.split("-").every((part) => GIVEN.has(part)))
const isSurname = (w: string): boolean => SURNAME.has(w) || (w.includes("-") && w.split("-").every((part) => SURNAME.has(part) || GIVEN.has(part)))
/** A given name that is a name even by itself: not also an ordinary word, a place, a month or a trade. */
const isStrongGiven = (w: string): boolean => isGiven(w) && !AMBIGUOUS.has(w) && !PLACE.has(w) && !CALENDAR.has(lower(w)) && !ALONE_NOT_A_NAME.has(lower(w))
/** A capitalised word that may be part of a name (not a stop word, month or weekday). */
const nameLike = (w: string): boolean => {
  if (!isCapitalised(w)) return false
  const l = lower(w)
  return !STOP.has(l) && !GREETINGS.has(l) && !CALENDAR.has(l) && !TITLES.has(l) && !PLACE_PREFIXES.has(l)
}

/** Per UTF-16 code unit: 1 when it is a letter or a mark (\p{L}\p{M}), 2 when not, 0 not looked up yet. */
const LETTER_OR_MARK = new Uint8Array(65536)
const LETTER_OR_MARK_RE = /^[\p{L}\p{M}]$/u
/** The length in code units of the letter or mark at `i` (2 for one outside the BMP), or 0 when there is none. */
const letterOrMarkAt = (text: string, i: number): number => {
  const c = text.charCodeAt(i)
  if (c < 128) return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ? 1 : 0
  if (c >= 0xd800 && c <= 0xdbff) {
    const cp = text.codePointAt(i)!
    return cp > 0xffff && LETTER_OR_MARK_RE.test(String.fromCodePoint(cp)) ? 2 : 0
  }
  let known = LETTER_OR_MARK[c]!
  if (known === 0) LETTER_OR_MARK[c] = known = LETTER_OR_MARK_RE.test(text[i]!) ? 1 : 2
  return known === 1 ? 1 : 0
}
const isJoiner = (c: number): boolean => c === 39 || c === 0x2019 || c === 45

/**
 * The words of `text`, as WORD (`[\p{L}\p{M}](?:[\p{L}\p{M}'’\-]*[\p{L}\p{M}])?`) finds them, by one scan of its
 * code units instead of a regular expression's match objects (a fifth of the model's time on long texts).
 */
const wordsOf = (text: string): Array<Word> => {
  const words: Array<Word> = []
  const n = text.length
  let i = 0
  while (i < n) {
    const first = letterOrMarkAt(text, i)
    if (first === 0) {
      i++
      continue
    }
    const start = i
    let j = i + first
    let end = j
    while (j < n) {
      const width = letterOrMarkAt(text, j)
      if (width > 0) end = j += width
      else if (isJoiner(text.charCodeAt(j))) j++
      else break
    }
    words.push({ text: text.slice(start, end), start, end })
    i = end
  }
  return words
}

/** Only a single space joins the words of one name. */
const joined = (text: string, a: Word, b: Word): boolean => b.start - a.end === 1 && text[a.end] === " "

/**
 * Extends a name starting at word i to the right: capitalised words (a place word only when it is also a known
 * surname: "James Wilson", "Sophie Martin"), and particles followed by one ("van der Linden", "Le Goff").
 */
const extend = (text: string, words: ReadonlyArray<Word>, i: number, limit = 4): number => {
  let last = i
  let j = i + 1
  while (j < words.length && j - i <= limit + 2 && joined(text, words[j - 1]!, words[j]!)) {
    // A possessive ends the name: "Chloe Okafor's Social Security number".
    if (isPossessive(words[last]!.text)) break
    const w = words[j]!.text
    // A run of particles counts only when a capitalised word follows it ("van der Linden", "de la Fuente", "Le Goff").
    let k = j
    while (k < words.length && isParticle(words[k]!.text) && k + 1 < words.length && joined(text, words[k]!, words[k + 1]!)) k++
    if (k > j && nameLike(words[k]!.text) && !isParticle(words[k]!.text)) {
      last = k
      j = k + 1
      continue
    }
    if (nameLike(w) && !isParticleOnly(w)) {
      last = j
      j++
      continue
    }
    break
  }
  return last
}

const isPossessive = (w: string): boolean => base(w) !== w
/** The index of the first word after a run of particles starting at j ("de la" in "Floor de la Fuente"), or j. */
const afterParticles = (text: string, words: ReadonlyArray<Word>, j: number): number => {
  let k = j
  while (k < words.length - 1 && isParticle(words[k]!.text) && joined(text, words[k]!, words[k + 1]!)) k++
  return k
}
const isParticle = (w: string): boolean => PARTICLES.has(lower(w)) && (!isCapitalised(w) || CAPITALISED_PARTICLES.has(lower(w)))
/** A capitalised particle ("Le", "Van") is a name's part only before another capitalised word. */
const isParticleOnly = (w: string): boolean => CAPITALISED_PARTICLES.has(lower(w))

/** The span of words[from..to], without a possessive "'s" at its end. */
const span = (words: ReadonlyArray<Word>, from: number, to: number): Span => {
  const last = words[to]!
  return { start: words[from]!.start, end: last.end - (last.text.length - base(last.text).length), type: "PERSON" }
}

/** The start of the line `index` is on (at most 40 characters of it; "?" when the line starts further back). */
const lineHead = (text: string, index: number): string => {
  const from = Math.max(0, index - 40)
  const before = text.slice(from, index)
  const nl = before.lastIndexOf("\n")
  return nl === -1 && from > 0 ? "?" : before.slice(nl + 1)
}
const lineTail = (text: string, index: number): string => {
  const after = text.slice(index, index + 40)
  const nl = after.indexOf("\n")
  return nl === -1 ? after : after.slice(0, nl)
}

/**
 * True when words[i] starts a line that holds nothing but one to four name-like words, right after a sign-off line
 * or a signature delimiter ("Mit freundlichen Grüßen\nAnneliese Brandt", "Cheers,\nGrace Callaghan", "--\nAnneliese"):
 * a signature.
 */
const isSignatureLine = (text: string, words: ReadonlyArray<Word>, i: number): boolean => {
  const w = words[i]!
  const head = lineHead(text, w.start)
  if (!ALONE_HEAD.test(head) || (COMMON_WORDS.has(lower(w.text)) && !isGiven(w.text)) || PLACE.has(w.text)) return false
  const before = previousLine(text, w.start - head.length)
  if (!SIGN_OFF.test(before) && !SIGNATURE_DELIMITER.test(before)) return false
  const last = extend(text, words, i, 3)
  return ALONE_TAIL.test(lineTail(text, words[last]!.end))
}

/** The line before the one starting at `lineStart` (at most 40 characters of its end). */
const previousLine = (text: string, lineStart: number): string => {
  if (lineStart <= 0) return ""
  const before = text.slice(Math.max(0, lineStart - 41), lineStart - 1)
  return before.slice(before.lastIndexOf("\n") + 1)
}

/** Particles that only ever join the parts of a person's name (not "de", also in "Banco de España"). */
const NAME_PARTICLES = new Set(["van", "von", "ten", "ter", "vom", "zu"])
/** A value in quotes: `'Grace Holloway'`, `"Thomas"` (SQL values, CSV cells, code). */
const QUOTE_BEFORE = /["'‘“]$/
const QUOTE_AFTER = /^["'’”]/

const ENCLOSED_BEFORE = /(?:^|[(\["'“‘]\s*)$/
const ENCLOSED_AFTER = /^\s*(?:[,)\]"'”’:;]|$)/

/** The line that opens an e-mail signature. */
const SIGNATURE_DELIMITER = /^\s*--\s*$/
const SPEAKER_HEAD = /^\s*\[[\d:]+\]\s*$/
const SPEAKER_TAIL = /^\s*:/
const ALONE_HEAD = /^\s*(?:--\s*)?$/
const ALONE_TAIL = /^\s*[,.!]?\s*$/
const SIGNED_TAIL = /^[,.!\s]*$/
const TITLE_GAP = /^[.\s]*$/
/** Between two words of one sentence: spaces only, or an apostrophe ("d'Camille" is "d'" + word elsewhere). */
const SAME_SENTENCE_GAP = /^ {1,2}$/

/** Names in prose: by gazetteer, after titles, greetings and introducing phrases, chat speakers, lone names. */
const namesInProse = (text: string): Array<Span> => {
  const words = wordsOf(text)
  const spans: Array<Span> = []
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!
    // Most words are neither capitalised nor a particle: nothing to do (and nothing to allocate) for them.
    if (!isCapitalised(w.text) && !(w.text.length <= 5 && PARTICLES.has(lower(w.text)))) continue
    const previous = i > 0 && words[i - 1]!.end >= w.start - 2 ? words[i - 1] : undefined
    const prevLower = previous === undefined ? "" : lower(previous.text)
    const prevTitle = prevLower.endsWith(".") ? prevLower.slice(0, -1) : prevLower
    // "Mevr. de Vries", "Sra. de la Fuente": particles right after a title start the surname.
    if (previous !== undefined && TITLES.has(prevTitle) && PARTICLES.has(lower(w.text)) && TITLE_GAP.test(text.slice(previous.end, w.start))) {
      let j = i
      while (j < words.length - 1 && PARTICLES.has(lower(words[j]!.text)) && joined(text, words[j]!, words[j + 1]!)) j++
      if (j > i && nameLike(words[j]!.text)) {
        const last = extend(text, words, j)
        spans.push(span(words, i, last))
        i = last
        continue
      }
    }
    if (!nameLike(w.text)) continue
    const b = base(w.text)
    // After a title: whatever capitalised words follow are the name ("Herr Oberhuber", "Mevr. Hoogendoorn").
    if (previous !== undefined && TITLES.has(prevLower) && TITLE_GAP.test(text.slice(previous.end, w.start))) {
      const last = extend(text, words, i)
      spans.push(span(words, i, last))
      i = last
      continue
    }
    if (previous !== undefined && ARTICLES.has(prevLower)) continue
    // After words that introduce a person ("a nombre de", "t.n.v.", "Kontoinhaber:", "this is"), capitalised words are a name.
    if (INTRODUCER.test(text.slice(Math.max(0, w.start - 30), w.start))) {
      const last = extend(text, words, i)
      if (last > i || !PLACE.has(w.text)) {
        spans.push(span(words, i, last))
        i = last
        continue
      }
    }
    // A known given name starts a name (an ambiguous one only before a known surname: "Grace Hopper", not
    // "Grace Period"); so does any capitalised word right before a known surname ("Montserrat Vázquez").
    const next = words[i + 1]
    const nextBase = next === undefined ? "" : base(next.text)
    const beforeSurname = next !== undefined && joined(text, w, next) && isCapitalised(next.text) && SURNAME.has(nextBase) && !GIVEN.has(nextBase) && !PLACE.has(w.text)
    const given = isGiven(b)
    const strong = given && isStrongGiven(b)
    // A given name that is also a place ("Elizabeth") starts a name before a known name or a capitalised word that is
    // neither an ordinary English word nor a place; one that is also an ordinary word ("Grace", "Summer", "Olive")
    // only before a known name that is not one too ("Grace Hopper", not "Grace Period", "Olive Green").
    const nextJoined = next !== undefined && joined(text, w, next) && nameLike(next.text)
    const nextKnown = isSurname(nextBase) || isGiven(nextBase)
    // Either also before a capitalised word in no list ("Ada Lovelace", "Grace Ashworth's CPR number"), or before
    // particles and a known surname ("Floor de Vries").
    const unknownWord = !COMMON_WORDS.has(lower(nextBase)) && !PLACE.has(nextBase) && !isParticleOnly(nextBase)
    const afterRun = next !== undefined && joined(text, w, next) ? afterParticles(text, words, i + 1) : i + 1
    const particlesThenSurname = afterRun > i + 1 && isCapitalised(words[afterRun]!.text) && isSurname(base(words[afterRun]!.text))
    // An ordinary word after it still makes a name when the two stand alone between brackets, quotes or commas
    // ("Comment (Grace Hopper, 2026-01-02)").
    const enclosed = nextJoined && ENCLOSED_BEFORE.test(lineHead(text, w.start)) && ENCLOSED_AFTER.test(lineTail(text, next.end))
    const ambiguousStart =
      given &&
      ((nextJoined && (AMBIGUOUS.has(b) ? !AMBIGUOUS.has(nextBase) && (nextKnown || unknownWord || enclosed) : nextKnown || unknownWord)) ||
        particlesThenSurname)
    const startsName = beforeSurname || strong || ambiguousStart
    const signature = !startsName && isSignatureLine(text, words, i)
    if (signature) {
      const last = extend(text, words, i, 3)
      spans.push(span(words, i, last))
      i = last
      continue
    }
    // An unknown capitalised word before "van", "von", "ten"... and a capitalised word: "Anneliese von Brandenstein".
    const particleName = !startsName && !COMMON_WORDS.has(lower(b)) && !PLACE.has(w.text) && next !== undefined && joined(text, w, next) && NAME_PARTICLES.has(lower(next.text))
    const last = startsName || particleName ? extend(text, words, i) : i
    if (last > i) {
      // A place word first ("Paris Hilton" vs "Paris Saint-Germain") needs a known name after it.
      if (PLACE.has(w.text) && !isSurname(nextBase) && !isGiven(nextBase)) continue
      spans.push(span(words, i, last))
      i = last
      continue
    }
    // A name alone: a known given name where people are addressed or sign, or mid-sentence ("de Camille :",
    // "spoke with Lucía"), or any capitalised word right after a greeting ("Beste Willemijn,") or as a chat
    // speaker ("[09:14] Femmetje: ...").
    const head = lineHead(text, w.start)
    const tail = lineTail(text, w.end)
    if (PLACE.has(w.text)) {
      if (given && ALONE_HEAD.test(head) && ALONE_TAIL.test(tail) && SIGN_OFF.test(previousLine(text, w.start - head.length))) spans.push(span(words, i, i))
      continue
    }
    const greeted = previous !== undefined && GREETINGS.has(prevLower)
    // A quoted value that is a known given name alone ("INSERT ... VALUES ("Thomas", ...)").
    if (strong && QUOTE_BEFORE.test(head) && QUOTE_AFTER.test(tail)) {
      spans.push(span(words, i, i))
      continue
    }
    const speaker = SPEAKER_HEAD.test(head) && SPEAKER_TAIL.test(tail)
    if (!given && !greeted && !speaker) continue
    const alone = ALONE_HEAD.test(head) && ALONE_TAIL.test(tail)
    const signedOff = SIGNED_TAIL.test(tail) && SIGN_OFF.test(head)
    // Mid-sentence, a given name; not beside an ampersand ("Johnson & Johnson" is a company).
    const midSentence =
      strong && !tail.startsWith(" &") && !head.endsWith("& ") && previous !== undefined && (POSSESSIVE_LINKS.has(prevLower) || !isCapitalised(previous.text)) && SAME_SENTENCE_GAP.test(text.slice(previous.end, w.start))
    if (greeted || speaker || (given && !AMBIGUOUS.has(b) && (alone || signedOff)) || midSentence) spans.push(span(words, i, i))
  }
  return spans
}

const FIELD_STOP = /[,，;；、]/u
const DIGIT_OR_AT = /[\d@]/
const STARTS_OTHER_LETTER = /^\p{Lo}/u

/** Names in fields labelled as names (a `name` column, "Nom :", `customer=`, `"firstname":`, vCard `FN:`) and mail headers. */
const namesInFields = (text: string): Array<Span> => {
  const spans: Array<Span> = []
  for (const f of fieldsOf(text)) {
    if (!isNameLabel(f.label)) continue
    // "联系人：王伟，电话 ...": the name ends at the first comma or semicolon.
    const full = text.slice(f.start, f.end)
    const stop = full.search(FIELD_STOP)
    const value = stop === -1 ? full : full.slice(0, stop)
    const words = wordsOf(value)
    if (words.length === 0 || words.length > 5 || DIGIT_OR_AT.test(value)) continue
    if (!words.every((w) => isCapitalised(w.text) || PARTICLES.has(lower(w.text)) || STARTS_OTHER_LETTER.test(w.text))) continue
    if (words.some((w) => STOP.has(lower(w.text)) && !PARTICLES.has(lower(w.text)))) continue
    // Only the words themselves (a trailing comment or punctuation stays out).
    spans.push({ start: f.start + words[0]!.start, end: f.start + words[words.length - 1]!.end, type: "PERSON" })
  }
  // A header's display name is always followed by "<address>": most texts have no "<" at all.
  const headers = text.includes("<") ? text.matchAll(MAIL_HEADER) : []
  for (const m of headers) {
    const name = m[1]!.trim()
    const at = m.index + m[0].indexOf(name)
    // "Reply-To: <noreply@...>": no display name.
    if (name !== "" && wordsOf(name).every((w) => isCapitalised(w.text) || PARTICLES.has(lower(w.text)))) spans.push({ start: at, end: at + name.length, type: "PERSON" })
  }
  return spans
}

/** Person names found by rules; may overlap each other (the caller merges). */
export const detectNamesByRules = (text: string): Array<Span> => [...namesInFields(text), ...namesInProse(text)]

const NAME_BREAK = /[\n\t|"<>(),;:]/

/**
 * Whole-name expansion and clean-up of another model's span (an HTTP name model, compromise): a caught given
 * name pulls in the surname, particles and hyphenated parts after it; a leading greeting or title is dropped; a
 * lone place, month or brand is not a person.
 */
export const refineNameSpan = (text: string, s: Span): Span | undefined => {
  let start = s.start
  let end = s.end
  // A name never crosses a line, a cell or a quote: keep the part before the first such break.
  const cut = text.slice(start, end).search(NAME_BREAK)
  if (cut === 0) return undefined
  if (cut > 0) end = start + cut
  const inner = wordsOf(text.slice(start, end))
  if (inner.length === 0 || PLACE_PREFIXES.has(lower(inner[0]!.text.split("-")[0]!))) return undefined
  // Drop a swallowed greeting, title, pronoun or acronym: "Dear Anna" -> "Anna", "BSN van Koen Smit" -> "Koen Smit".
  let k = 0
  const leading = (w: string) => GREETINGS.has(lower(w)) || TITLES.has(lower(w)) || STOP.has(lower(w)) || PARTICLES.has(lower(w)) || !isCapitalised(w)
  while (k < inner.length - 1 && leading(inner[k]!.text)) k++
  if (leading(inner[k]!.text)) return undefined
  // ... and a trailing one: "Olabarrieta y Sra." -> "Olabarrieta".
  let n = inner.length - 1
  while (n > k && (leading(inner[n]!.text) || PARTICLES.has(lower(inner[n]!.text)))) n--
  start += inner[k]!.start
  end = start + (inner[n]!.end - inner[k]!.start)
  // A value under a label of another kind (a city column, an e-mail key) is not a person.
  const field = fieldAt(text, start, end)
  if (field !== undefined && !isNameLabel(field.label) && isNotANameLabel(field.label)) return undefined
  const words = wordsOf(text.slice(start, end))
  if (words.length === 0) return undefined
  if (words.length === 1) {
    const w = words[0]!.text
    if (PLACE.has(w) || CALENDAR.has(lower(w)) || STOP.has(lower(w)) || ALONE_NOT_A_NAME.has(lower(w))) return undefined
  }
  // Expand to the right over a surname the model left out ("Giulia" -> "Giulia Rossi").
  const all = wordsOf(text.slice(start, Math.min(text.length, end + 60))).map((w) => ({ ...w, start: w.start + start, end: w.end + start }))
  const lastInside = all.findIndex((w) => w.end >= end)
  if (lastInside >= 0) {
    const last = extend(text, all, lastInside, 3)
    if (last > lastInside) end = all[last]!.end
  }
  return { start, end, type: "PERSON" }
}

/**
 * The names of `text`: another model's spans, if any (refined), and the rules' spans, overlapping ones merged
 * into one (so a given name from one source and a surname from the other make one whole name).
 */
export const combineNames = (text: string, modelSpans: ReadonlyArray<Span>): Array<Span> => {
  const all = [...modelSpans.flatMap((s) => refineNameSpan(text, s) ?? []), ...detectNamesByRules(text)].sort((a, b) => a.start - b.start)
  const merged: Array<Span> = []
  for (const s of all) {
    const last = merged[merged.length - 1]
    if (last !== undefined && s.start < last.end) merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, s.end), type: "PERSON" }
    else merged.push(s)
  }
  return merged
}

/** The portable name model: the names of `text` by the rules alone (no other model). */
export const detectNames = (text: string): Array<Span> => combineNames(text, [])
