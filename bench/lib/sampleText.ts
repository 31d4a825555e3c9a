/**
 * Text for the tokeniser bench, generated from a fixed seed so every run measures the same bytes.
 *  - prose: varied sentences, about one personal name per 80 characters (thousands of different names),
 *    with an e-mail address or phone number now and then, in paragraphs of a few lines.
 *  - repeated: one short line over and over, the input that made the name library's matcher quadratic.
 *  - digit-run: "12 " over and over, one run of digit groups with no phone in it, the input that took the phone
 *    detector seconds per 100 KB (the library re-read every group of every candidate, once per region).
 */
const FIRST = [
  "Alice", "Bob", "Maria", "Peter", "Chen", "Fatima", "Olga", "Jean", "Liam", "Sofia", "Ahmed", "Yuki", "Carlos",
  "Anna", "David", "Priya", "Hannah", "Lars", "Ines", "Mateo", "Zoe", "Tomas", "Amara", "Kenji", "Elena", "Noah",
  "Leila", "Marco", "Ingrid", "Samuel", "Aisha", "Pablo", "Greta", "Omar", "Claire", "Viktor", "Nadia", "Hugo",
  "Rosa", "Felix"
]
const LAST = [
  "Johnson", "Smith", "Garcia", "O'Neill", "Wang", "Haddad", "Petrova", "Dupont", "Murphy", "Rossi", "Khan",
  "Tanaka", "Silva", "Berg", "Cohen", "Patel", "Novak", "Schmidt", "Moreau", "Larsen", "Okafor", "Fischer",
  "Romano", "Lindqvist", "Kowalski", "Nakamura", "Fernandez", "Weber", "Dubois", "Jensen", "Costa", "Hughes",
  "Bauer", "Ivanova", "Mendes", "Walsh", "Keller", "Sato", "Reyes", "Brennan"
]

type Template = (a: string, b: string, n: number) => string
const TEMPLATES: ReadonlyArray<Template> = [
  (a, b, n) => `${a} met ${b} on ${n % 28 + 1} March to discuss the budget for the northern office.`,
  (a, b, n) => `Please forward the ${n} invoices to ${a}, who will check them with ${b} before Friday.`,
  (_a, _b, n) => `The meeting ran for ${n} minutes and nobody could agree on the next steps.`,
  (a, _b, n) => `According to ${a}, the shipment of ${n} boxes arrived late because the truck broke down.`,
  (_a, _b, n) => `We reviewed ${n} support tickets this week; most were about login problems.`,
  (a, _b, n) => `You can reach ${a} at ${a.split(" ")[0]!.toLowerCase()}.${n}@example.com or on +44 20 7946 0${n}.`,
  (a, b) => `Dr. ${a} asked whether ${b}'s team could present the results at the next review.`,
  (_a, b, n) => `The contract was signed by ${b} after ${n} days of negotiation with the supplier.`
]

/** A small deterministic generator (LCG); Math.random would give every run different text. */
const generator = (seed: number) => {
  let state = seed >>> 0
  return (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    return (state >>> 8) % n
  }
}

export const proseText = (chars: number, seed = 42): string => {
  const pick = generator(seed)
  const name = () => `${FIRST[pick(FIRST.length)]} ${LAST[pick(LAST.length)]}`
  const parts: Array<string> = []
  let length = 0
  while (length < chars) {
    const sentence = TEMPLATES[pick(TEMPLATES.length)]!(name(), name(), pick(900) + 100)
    const part = sentence + (pick(4) === 0 ? "\n" : " ")
    parts.push(part)
    length += part.length
  }
  return parts.join("").slice(0, chars)
}

export const repeatedText = (chars: number): string => {
  const line = "Please call Maria Garcia about the quarterly report before the meeting on Friday.\n"
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars)
}

export const digitRunText = (chars: number): string => "12 ".repeat(Math.ceil(chars / 3)).slice(0, chars)

/**
 * One short unit repeated to `chars`: the shapes that once overflowed V8's regex stack or hit PCRE2's match limit
 * (issue 40's known defect), kept in the bench so their time stays bounded (sdks/vectors/tokeniser-large.json holds
 * the same shapes with the spans every engine must find).
 */
const repeatedUnit = (unit: string) => (chars: number): string => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars)
export const dottedRunText = repeatedUnit("a.")
export const spacedDigitsText = repeatedUnit("1 ")
export const dashedDigitsText = repeatedUnit("1-")
