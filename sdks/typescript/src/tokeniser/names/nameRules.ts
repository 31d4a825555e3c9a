import { fieldAt, fieldsOf } from "../detectors/fields.ts"
import { mentions } from "../detectors/fieldKinds.ts"
import type { Span } from "../types.ts"
import { CALENDAR_WORDS, GIVEN_NAMES, PLACE_WORDS, SURNAMES } from "./gazetteer.generated.ts"

/**
 * Person names by rules and gazetteers, to run beside the statistical model: given names and surnames
 * of many locales (generated from @faker-js/faker), titles and labelled fields in English, French,
 * German, Spanish and Dutch, and negative lists (places, months and weekdays that are also names,
 * salutations, brands). Linear in the text: one pass over its words plus set look-ups.
 */

const GIVEN = new Set(GIVEN_NAMES)
const SURNAME = new Set(SURNAMES)
const PLACE = new Set(PLACE_WORDS)
const CALENDAR = new Set(CALENDAR_WORDS)

/** Titles before a name; the title itself stays readable. */
const TITLES = new Set(
  "mr mrs ms mx dr prof sir dame m mme mlle monsieur madame mademoiselle herr herrn frau fräulein señor señora señorita sr sra srta don doña dra dña meneer mevrouw mevr dhr mw heer signor signora sig".split(" ")
)
/** Words that greet or thank someone: the next capitalised word is a name even when it stands alone. */
const GREETINGS = new Set(
  "hi hello hey dear thanks thank cheers bye bonjour salut cher chère coucou merci hallo liebe lieber danke servus grüße gruß hola querida querido estimado estimada gracias saludos hoi beste dag bedankt groeten groet ciao cara caro grazie".split(" ")
)
/** Particles inside names: "Ludwig van der Heyden", "María de la Fuente", "Otto von Bismarck". */
const PARTICLES = new Set("van der den de del della la le du des von vom zu ten ter te da di dos das y bin ibn al st".split(" "))
/** Capitalised words that start sentences, address people or name things, and are never names by themselves. */
const STOP = new Set(
  (
    "the this that these those and or but if in on at for from to with by of as is are was be it its he she we they you your our my his her their " +
    "subject re fwd fw from to cc date sent best kind regards sincerely yours team support customer client patient name " +
    "le la les un une des et ou mais pour avec dans sur par bonjour madame monsieur merci cordialement " +
    "der die das ein eine und oder aber mit von für auf bei grüße viele beste freundlichen " +
    "el los las una y o pero con para por en saludos un " +
    "het een en maar met voor op bij groeten vriendelijke " +
    "sir madam ford dell philips siemens bosch porsche renault heineken zara carrefour ferrari chanel disney boeing google apple amazon microsoft tesla " +
    "ville stadt ort ciudad plaats nom naam nombre prénom vorname nachname apellidos voornaam achternaam titulaire kunde klant cliente sie ihr ich du wir usted vous nous ik wij jij"
  ).split(" ")
)
/** Labels whose values are places, companies or contact data, never a person's name. */
const NOT_A_NAME_LABEL = /(?:city|ville|ort|stadt|wohnort|ciudad|localidad|plaats|woonplaats|stad|location|place|town|country|pays|land|pa[ií]s|company|firma|société|empresa|bedrijf|street|rue|straße|strasse|calle|straat|address|adresse|dirección|adres|mail|status|state|estado|statut)/iu

const NAME_CUE =
  /(?:\b(?:on behalf of|account holder|holder|a nombre de|en nombre de|au nom de|de la part de|im namen von|namens|t\.n\.v\.|ten name van|kontoinhaber(?:in)?|titular|titulaire|signed by|firmado por|sign[ée] par|unterzeichnet von|groeten van|groet van|greetings from|grüße von|grüßen von|saludos de|amitiés de)\s*:?\s*)$/iu

/** Trades and colours that are also names: never a name when they stand alone ("painted Rose", "the Mason"). */
const ALONE_NOT_A_NAME = new Set("baker carpenter mason smith cook butler taylor miller fisher rose olive violet ruby amber scarlett".split(" "))

const ARTICLES = new Set("the a an la le les der die das el los las het een".split(" "))

interface Word {
  readonly text: string
  readonly start: number
  readonly end: number
}

const WORD = /[\p{L}\p{M}](?:[\p{L}\p{M}'’\-]*[\p{L}\p{M}])?/gu
const isCapitalised = (w: string): boolean => /^\p{Lu}\p{Ll}/u.test(w) || /^\p{Lu}['’]\p{Lu}\p{Ll}/u.test(w)
const base = (w: string): string => w.replace(/['’]s$/u, "")
const lower = (w: string): string => w.toLowerCase()
const isGiven = (w: string): boolean => GIVEN.has(w) || w.split("-").every((part) => GIVEN.has(part))
const isSurname = (w: string): boolean => SURNAME.has(w) || w.split("-").every((part) => SURNAME.has(part) || GIVEN.has(part))
/** A capitalised word that may be part of a name (not a stop word, month or weekday). */
const nameLike = (w: string): boolean =>
  isCapitalised(w) && !STOP.has(lower(w)) && !GREETINGS.has(lower(w)) && !CALENDAR.has(lower(w)) && !TITLES.has(lower(w).replace(/\.$/, "")) && !PLACE_PREFIXES.has(lower(w))
/** First words of place names: "San Sebastián", "Saint-Étienne", "Den Haag", "São Paulo". */
const PLACE_PREFIXES = new Set("san santa santo saint sainte st sankt são sao den los las".split(" "))

const wordsOf = (text: string): Array<Word> => [...text.matchAll(WORD)].map((m) => ({ text: m[0], start: m.index, end: m.index + m[0].length }))

/** Only a single space (or nothing but a hyphen) joins the words of one name. */
const joined = (text: string, a: Word, b: Word): boolean => b.start - a.end === 1 && text[a.end] === " "

/** Extends a name starting at word i to the right: capitalised words and particles followed by one. */
const extend = (text: string, words: ReadonlyArray<Word>, i: number, limit = 4): number => {
  let last = i
  let j = i + 1
  while (j < words.length && j - i <= limit + 2 && joined(text, words[j - 1]!, words[j]!)) {
    const w = words[j]!.text
    if (nameLike(w) && !PLACE.has(w)) {
      last = j
      j++
      continue
    }
    // Particles count only when a capitalised word follows them.
    if (PARTICLES.has(lower(w)) && !isCapitalised(w)) {
      j++
      continue
    }
    break
  }
  return last
}

/** The span of words[from..to], without a possessive "'s" at its end. */
const span = (words: ReadonlyArray<Word>, from: number, to: number): Span => {
  const last = words[to]!
  return { start: words[from]!.start, end: last.end - (last.text.length - base(last.text).length), type: "PERSON" }
}

/** The start of the line `index` is on, and whether only a chat time stamp or nothing precedes it. */
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

/** Names in prose: by gazetteer, after titles and greetings, chat speakers, lone names on a line. */
const namesInProse = (text: string): Array<Span> => {
  const words = wordsOf(text)
  const spans: Array<Span> = []
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!
    const previous = i > 0 && words[i - 1]!.end >= w.start - 2 ? words[i - 1] : undefined
    const prevLower = previous === undefined ? "" : lower(previous.text)
    // "Mevr. de Vries", "Sra. de la Fuente": particles right after a title start the surname.
    if (previous !== undefined && TITLES.has(prevLower.replace(/\.$/, "")) && PARTICLES.has(lower(w.text)) && /^[.\s]*$/.test(text.slice(previous.end, w.start))) {
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
    // After a title: whatever capitalised words follow are the name ("Herr Oberhuber", "Mevr. Hoogendoorn").
    if (previous !== undefined && TITLES.has(prevLower) && /^[.\s]*$/.test(text.slice(previous.end, w.start)) && !CALENDAR.has(lower(w.text))) {
      const last = extend(text, words, i)
      spans.push(span(words, i, last))
      i = last
      continue
    }
    if (previous !== undefined && ARTICLES.has(prevLower)) continue
    // After words that introduce a person ("a nombre de", "t.n.v.", "Kontoinhaber:"), capitalised words are a name.
    if (NAME_CUE.test(text.slice(Math.max(0, w.start - 30), w.start))) {
      const last = extend(text, words, i)
      spans.push(span(words, i, last))
      i = last
      continue
    }
    // A known given name starts a name; so does any capitalised word right before a known surname
    // ("Montserrat Vázquez" when "Montserrat" is in no list).
    const next = words[i + 1]
    const beforeSurname =
      next !== undefined && joined(text, w, next) && isCapitalised(next.text) && SURNAME.has(base(next.text)) && !GIVEN.has(base(next.text)) && !PLACE.has(w.text)
    const given = isGiven(base(w.text))
    const last = given || beforeSurname ? extend(text, words, i) : i
    if (last > i) {
      // A place word first ("Paris Hilton" vs "Paris Saint-Germain") needs a known surname after it.
      if (PLACE.has(w.text) && !isSurname(base(words[i + 1]!.text))) continue
      spans.push(span(words, i, last))
      i = last
      continue
    }
    // A name alone: a known given name where people are addressed or sign, or any capitalised word right
    // after a greeting ("Beste Willemijn,") or as a chat speaker ("[09:14] Femmetje: ...").
    if (PLACE.has(w.text)) continue
    const head = lineHead(text, w.start)
    const tail = lineTail(text, w.end)
    const greeted = previous !== undefined && GREETINGS.has(prevLower)
    const speaker = /^\s*\[[\d:]+\]\s*$/.test(head) && /^\s*:/.test(tail)
    if (!given && !greeted && !speaker) continue
    const alone = /^\s*(?:--\s*)?$/.test(head) && /^\s*[,.!]?\s*$/.test(tail)
    const signedOff = /^[,.!\s]*$/.test(tail) && /(?:thanks|cheers|merci|danke|gracias|bedankt|groeten|grüße|saludos|regards)[,!\s]*$/i.test(head)
    if (greeted || speaker || (given && (alone || signedOff))) spans.push(span(words, i, i))
  }
  return spans
}

const MAIL_HEADER = /^(?:from|to|cc|reply-to|von|an|de|à|para|van|aan)\s*:\s*"?([^"<>\n@]+?)"?\s*<[^>\n]+>/gimu

/** Names in fields labelled as names (a `name` column, "Nom :", `customer=`, vCard `FN:`) and mail headers. */
const namesInFields = (text: string): Array<Span> => {
  const spans: Array<Span> = []
  for (const f of fieldsOf(text)) {
    if (!mentions("name", f.label)) continue
    // "联系人：王伟，电话 ...": the name ends at the first comma or semicolon.
    const full = text.slice(f.start, f.end)
    const stop = full.search(/[,，;；、]/u)
    const value = stop === -1 ? full : full.slice(0, stop)
    const words = wordsOf(value)
    if (words.length === 0 || words.length > 5 || /[\d@]/.test(value)) continue
    if (!words.every((w) => isCapitalised(w.text) || PARTICLES.has(lower(w.text)) || /^\p{Lo}/u.test(w.text))) continue
    if (words.some((w) => STOP.has(lower(w.text)) && !PARTICLES.has(lower(w.text)))) continue
    // Only the words themselves (a trailing comment or punctuation stays out).
    spans.push({ start: f.start + words[0]!.start, end: f.start + words[words.length - 1]!.end, type: "PERSON" })
  }
  for (const m of text.matchAll(MAIL_HEADER)) {
    const name = m[1]!.trim()
    const at = m.index + m[0].indexOf(name)
    if (wordsOf(name).every((w) => isCapitalised(w.text) || PARTICLES.has(lower(w.text)))) spans.push({ start: at, end: at + name.length, type: "PERSON" })
  }
  return spans
}

/** Person names found by rules; may overlap each other (the caller merges). */
export const detectNamesByRules = (text: string): Array<Span> => [...namesInFields(text), ...namesInProse(text)]

/**
 * Whole-name expansion and clean-up of a model's span: a caught given name pulls in the surname, particles
 * and hyphenated parts after it; a leading greeting or title is dropped; a lone place, month or brand is
 * not a person.
 */
export const refineNameSpan = (text: string, s: Span): Span | undefined => {
  let start = s.start
  let end = s.end
  // A name never crosses a line, a cell or a quote: keep the part before the first such break.
  const cut = text.slice(start, end).search(/[\n\t|"<>(),;:]/)
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
  if (field !== undefined && !mentions("name", field.label) && NOT_A_NAME_LABEL.test(field.label)) return undefined
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
 * The names of `text`: the model's spans (refined) and the rules' spans, overlapping ones merged into
 * one (so a given name from one source and a surname from the other make one whole name).
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
