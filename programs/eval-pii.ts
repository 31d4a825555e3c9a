/**
 * Precision and recall of the client tokeniser's detectors, with the default engine configuration
 * (built-in name model, default phone regions), on three labelled corpora:
 *  - sentences: the hand-written sentence corpus (test/fixtures/pii-corpus/corpus.jsonl);
 *  - dev: the development half of the generated evaluation corpus (test/fixtures/pii-corpus/eval/dev.jsonl),
 *    the one to look at and tune on: its errors are printed;
 *  - held-out: the other half (eval/heldout.jsonl), only measured: its errors are counted, never printed.
 * Each corpus is scored per type, then pooled by shape, format family (prose, table, JSON, log, form), language and
 * generator family; hard negatives (items with nothing personal) report the share the engine altered.
 * Also times the engine on a 2 KB prompt with five identifiers (names off) and on 100 KB / 1 MB texts.
 * Prints tables and writes bench/results/pii-eval.json.
 * Run: npm run eval:pii            (add --errors=N to print at most N dev errors, default 80)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { performance } from "node:perf_hooks"
import { scoreCorpus, type CorpusScore, type LabelledSentence, type TypeScore } from "../sdks/typescript/src/tokeniser/evaluateCorpus.ts"
import { createSession, detectSpans, detectStructured, tokeniseText, type Span } from "../sdks/typescript/src/tokeniser/index.ts"

const root = new URL("../", import.meta.url)
type CorpusItem = LabelledSentence & { shape?: string; lang?: string; family?: string }
const load = (path: string): Array<CorpusItem> =>
  readFileSync(new URL(path, root), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as CorpusItem)

const maxErrors = Number(process.argv.find((a) => a.startsWith("--errors="))?.slice(9) ?? 80)
const pct = (x: number) => (x * 100).toFixed(1).padStart(6)
const row = (name: string, s: TypeScore) =>
  `${name.padEnd(18)} ${String(s.truePositives).padStart(4)} ${String(s.falsePositives).padStart(4)} ${String(s.falseNegatives).padStart(4)}  ${pct(s.precision)}%  ${pct(s.recall)}%  ${pct(s.f1)}%`

/** The format family of an item's shape: what the issue's figures are broken down by. */
const FORMAT: Record<string, string> = {
  csv: "table", "csv-semicolon": "table", tsv: "table", markdown: "table", table: "table",
  json: "json", yaml: "json", code: "json",
  "key-value": "log", dotenv: "log", log: "log",
  form: "form", signature: "form",
  prose: "prose", email: "prose", chat: "prose"
}
const formatOf = (item: CorpusItem): string => FORMAT[item.shape ?? ""] ?? item.shape ?? "other"

/**
 * Hard negatives are the items with no labelled span (version strings, OIDs, section numbers, coordinates,
 * order numbers, look-alike dates and references): an item is altered when the engine replaces anything in it.
 * Counted twice: any detection (names included), and structured detections only.
 */
const alteration = (corpus: ReadonlyArray<CorpusItem>, predictions: ReadonlyArray<ReadonlyArray<Span>>) => {
  const negatives = corpus.flatMap((c, i) => (c.spans.length === 0 ? [i] : []))
  const any = negatives.filter((i) => predictions[i]!.length > 0).length
  const structured = negatives.filter((i) => predictions[i]!.some((p) => p.type !== "PERSON")).length
  const byFamily: Record<string, { items: number; altered: number }> = {}
  for (const i of negatives) {
    const family = corpus[i]!.family ?? corpus[i]!.shape ?? "other"
    const f = (byFamily[family] ??= { items: 0, altered: 0 })
    f.items++
    if (predictions[i]!.length > 0) f.altered++
  }
  return { items: negatives.length, altered: any, structuredAltered: structured, rate: negatives.length === 0 ? 0 : any / negatives.length, structuredRate: negatives.length === 0 ? 0 : structured / negatives.length, byFamily }
}

const evaluate = async (name: string, corpus: ReadonlyArray<CorpusItem>) => {
  const predictions: Array<ReadonlyArray<Span>> = []
  const started = performance.now()
  for (const item of corpus) predictions.push(await detectSpans(item.text, createSession()))
  const elapsedMs = performance.now() - started
  const result = scoreCorpus(corpus, predictions)
  console.log(`\n== ${name}: ${result.sentences} items (${(elapsedMs / corpus.length).toFixed(2)} ms per item, names on)\n`)
  console.log("type                 TP   FP   FN  precision  recall      F1")
  for (const [type, s] of Object.entries(result.perType)) {
    if (s.truePositives + s.falsePositives + s.falseNegatives > 0) console.log(row(type, s))
  }
  console.log(row("structured pooled", result.structured))
  console.log(row("names (exact)", result.perType.PERSON!))
  console.log(row("names (overlap)", result.personOverlap))
  // The same pooled scores by shape, format family, language and generator family, to see which layouts leak.
  const breakdown = (title: string, keyOf: (c: CorpusItem) => string | undefined) => {
    const out: Record<string, { structured: TypeScore; names: TypeScore }> = {}
    const keys = [...new Set(corpus.map(keyOf).filter((k) => k !== undefined))].sort()
    if (keys.length < 2) return out
    console.log(`\n${`structured by ${title}`.padEnd(18)}   TP   FP   FN  precision  recall      F1   | names F1`)
    for (const key of keys) {
      const idx = corpus.flatMap((c, i) => (keyOf(c) === key ? [i] : []))
      const score = scoreCorpus(idx.map((i) => corpus[i]!), idx.map((i) => predictions[i]!))
      out[key!] = { structured: score.structured, names: score.perType.PERSON! }
      const names = score.perType.PERSON!
      console.log(`${row(key!, score.structured)}   | ${names.truePositives + names.falseNegatives + names.falsePositives === 0 ? "     -" : pct(names.f1) + "%"}`)
    }
    return out
  }
  const byShape = breakdown("shape", (c) => c.shape)
  const byFormat = breakdown("format", formatOf)
  const byLanguage = breakdown("language", (c) => c.lang)
  const byFamily = breakdown("family", (c) => c.family)
  const hardNegatives = alteration(corpus, predictions)
  if (hardNegatives.items > 0) {
    console.log(
      `\nhard negatives (items with nothing personal): ${hardNegatives.items}, altered ${hardNegatives.altered} (${pct(hardNegatives.rate)}%), ` +
        `by a structured type ${hardNegatives.structuredAltered} (${pct(hardNegatives.structuredRate)}%)`
    )
    for (const [family, f] of Object.entries(hardNegatives.byFamily).sort()) {
      console.log(`  ${family.padEnd(30)} ${String(f.altered).padStart(4)} / ${String(f.items).padStart(4)}  ${pct(f.items === 0 ? 0 : f.altered / f.items)}%`)
    }
  }
  return { result, byShape, byFormat, byLanguage, byFamily, hardNegatives, msPerItem: elapsedMs / corpus.length }
}

const summary = (r: CorpusScore) => ({
  items: r.sentences,
  structured: r.structured,
  namesExact: r.perType.PERSON,
  namesOverlap: r.personOverlap,
  perType: r.perType
})

const sentences = await evaluate("sentences (hand-written)", load("test/fixtures/pii-corpus/corpus.jsonl"))
const dev = await evaluate("dev (generated + hard cases; tune on this)", load("test/fixtures/pii-corpus/eval/dev.jsonl"))
const heldOut = await evaluate("held-out (never tuned on; errors not shown)", load("test/fixtures/pii-corpus/eval/heldout.jsonl"))

const devErrors = dev.result.errors
if (devErrors.length > 0) {
  console.log(`\ndev errors (${devErrors.length}, showing ${Math.min(maxErrors, devErrors.length)}):`)
  for (const e of devErrors.slice(0, maxErrors)) console.log(`  ${e.id} ${e.kind} ${e.type}: ${JSON.stringify(e.text)}`)
}

// Engine speed: the same prompt as the SDK budget (about 2 KB, five identifiers), names off.
const prompt = (
  "Please draft a reply to the customer below and keep the tone friendly. " +
  "Customer: reach me at jane.doe@example.com or +44 20 7946 0958; card 4111 1111 1111 1111 was charged twice; " +
  "refund to DE89 3704 0044 0532 0130 00 and the login came from IP 203.0.113.45. "
).padEnd(2048, " The order was late and the box was damaged; they would like an apology and a delivery date.")
const runs: Array<number> = []
for (let i = 0; i < 600; i++) {
  const session = createSession({ names: "off" })
  const t0 = performance.now()
  await tokeniseText(prompt, session)
  runs.push(performance.now() - t0)
}
const sorted = runs.slice(100).sort((a, b) => a - b)
const quantile = (q: number) => sorted[Math.floor(q * (sorted.length - 1))]!
const big = (bytes: number) => {
  const unit = "Ticket from jane.doe@example.com: call +44 20 7946 0958, card 4111 1111 1111 1111, host 10.0.0.5 in the log. Nothing else to say here today. "
  const text = unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes)
  const t0 = performance.now()
  detectStructured(text)
  return performance.now() - t0
}
const speed = { prompt2kNamesOffP50Ms: quantile(0.5), prompt2kNamesOffP95Ms: quantile(0.95), structured100kMs: big(100_000), structured1MMs: big(1_000_000) }
console.log(
  `\nspeed: 2 KB prompt, 5 identifiers, names off: p50 ${speed.prompt2kNamesOffP50Ms.toFixed(3)} ms, p95 ${speed.prompt2kNamesOffP95Ms.toFixed(3)} ms; ` +
    `structured detection 100 KB ${speed.structured100kMs.toFixed(0)} ms, 1 MB ${speed.structured1MMs.toFixed(0)} ms`
)

mkdirSync(new URL("bench/results/", root), { recursive: true })
writeFileSync(
  new URL("bench/results/pii-eval.json", root),
  JSON.stringify(
    {
      generated_at: new Date().toISOString(),
      sentences: { ...summary(sentences.result), errors: sentences.result.errors },
      dev: { ...summary(dev.result), byShape: dev.byShape, byFormat: dev.byFormat, byLanguage: dev.byLanguage, byFamily: dev.byFamily, hardNegatives: dev.hardNegatives, errors: dev.result.errors },
      heldOut: { ...summary(heldOut.result), byShape: heldOut.byShape, byFormat: heldOut.byFormat, byLanguage: heldOut.byLanguage, byFamily: heldOut.byFamily, hardNegatives: heldOut.hardNegatives, errorCount: heldOut.result.errors.length },
      speed
    },
    null,
    2
  ) + "\n"
)
console.log("\nwrote bench/results/pii-eval.json")
