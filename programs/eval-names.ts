/**
 * Names F1 per language, for each name model, on the labelled corpora of `npm run eval:pii` (the hand-written
 * sentences, the dev half and the held-out half of the generated evaluation corpus): the figures issue 40 asks for
 * ("match or beat the compromise-based model on F1 for every language"). Models compared:
 *  - builtin: the portable name model (names/nameRules.ts over sdks/vectors/name-model.json), the default;
 *  - compromise: the opt-in model (builtin plus the compromise library, setting "compromise").
 * Each item goes through detectSpans with default structured detectors, so a name overlapping an identifier is
 * resolved as the engine resolves it. Scoring is exact span match (evaluateCorpus.ts). Prints a table per corpus and
 * writes bench/results/names-eval.json.
 * Run: npm run eval:names
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { scoreCorpus, type LabelledSentence, type TypeScore } from "../sdks/typescript/src/tokeniser/evaluateCorpus.ts"
import { builtinNameModel, compromiseNameModel, createSession, detectSpans, type NameModel, type Span } from "../sdks/typescript/src/tokeniser/index.ts"

type Item = LabelledSentence & { readonly lang?: string }

const root = new URL("../", import.meta.url)
const load = (path: string): Array<Item> =>
  readFileSync(new URL(path, root), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Item)

const CORPORA = {
  sentences: "test/fixtures/pii-corpus/corpus.jsonl",
  dev: "test/fixtures/pii-corpus/eval/dev.jsonl",
  heldOut: "test/fixtures/pii-corpus/eval/heldout.jsonl"
} as const
const MODELS: Record<string, NameModel> = { builtin: builtinNameModel, compromise: compromiseNameModel }

const pct = (x: number) => (x * 100).toFixed(1).padStart(5)
const cell = (s: TypeScore) => `${pct(s.f1)} (P ${pct(s.precision)} R ${pct(s.recall)})`

const results: Record<string, Record<string, { msPerItem: number; perLanguage: Record<string, TypeScore> }>> = {}
for (const [corpusName, path] of Object.entries(CORPORA)) {
  const corpus = load(path)
  const languages = ["all", ...[...new Set(corpus.map((c) => c.lang ?? "all"))].filter((l) => l !== "all").sort()]
  results[corpusName] = {}
  for (const [modelName, model] of Object.entries(MODELS)) {
    const predictions: Array<ReadonlyArray<Span>> = []
    const started = performance.now()
    for (const item of corpus) predictions.push(await detectSpans(item.text, createSession({ names: model })))
    const msPerItem = (performance.now() - started) / corpus.length
    const perLanguage: Record<string, TypeScore> = {}
    for (const lang of languages) {
      const idx = corpus.flatMap((c, i) => (lang === "all" || c.lang === lang ? [i] : []))
      perLanguage[lang] = scoreCorpus(idx.map((i) => corpus[i]!), idx.map((i) => predictions[i]!)).perType.PERSON!
    }
    results[corpusName]![modelName] = { msPerItem, perLanguage }
  }
  console.log(`\n== ${corpusName} (${corpus.length} items): names F1 (exact spans) per language\n`)
  console.log(`${"language".padEnd(9)} ${Object.keys(MODELS).map((m) => m.padEnd(26)).join(" ")}`)
  for (const lang of languages) {
    console.log(`${lang.padEnd(9)} ${Object.keys(MODELS).map((m) => cell(results[corpusName]![m]!.perLanguage[lang]!).padEnd(26)).join(" ")}`)
  }
  console.log(`${"ms/item".padEnd(9)} ${Object.keys(MODELS).map((m) => results[corpusName]![m]!.msPerItem.toFixed(2).padEnd(26)).join(" ")}`)
}

mkdirSync(new URL("bench/results/", root), { recursive: true })
writeFileSync(new URL("bench/results/names-eval.json", root), JSON.stringify({ generated_at: new Date().toISOString(), results }, null, 2) + "\n")
console.log("\nwrote bench/results/names-eval.json")
