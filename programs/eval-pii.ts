/**
 * Precision and recall of the client tokeniser's detectors, with the default engine configuration
 * (built-in name model, default phone regions), on three labelled corpora:
 *  - sentences: the hand-written sentence corpus (test/fixtures/pii-corpus/corpus.jsonl);
 *  - dev: the development half of the generated evaluation corpus (test/fixtures/pii-corpus/eval/dev.jsonl),
 *    the one to look at and tune on: its errors are printed;
 *  - held-out: the other half (eval/heldout.jsonl), only measured: its errors are counted, never printed.
 * Also times the engine on a 2 KB prompt with five identifiers (names off) and on 100 KB / 1 MB texts.
 * Prints tables and writes bench/results/pii-eval.json.
 * Run: npm run eval:pii            (add --errors=N to print at most N dev errors, default 80)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { performance } from "node:perf_hooks"
import { scoreCorpus, type CorpusScore, type LabelledSentence, type TypeScore } from "../sdks/typescript/src/tokeniser/evaluateCorpus.ts"
import { createSession, detectSpans, detectStructured, tokeniseText, type Span } from "../sdks/typescript/src/tokeniser/index.ts"

const root = new URL("../", import.meta.url)
const load = (path: string): Array<LabelledSentence & { shape?: string }> =>
  readFileSync(new URL(path, root), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as LabelledSentence & { shape?: string })

const maxErrors = Number(process.argv.find((a) => a.startsWith("--errors="))?.slice(9) ?? 80)
const pct = (x: number) => (x * 100).toFixed(1).padStart(6)
const row = (name: string, s: TypeScore) =>
  `${name.padEnd(18)} ${String(s.truePositives).padStart(4)} ${String(s.falsePositives).padStart(4)} ${String(s.falseNegatives).padStart(4)}  ${pct(s.precision)}%  ${pct(s.recall)}%  ${pct(s.f1)}%`

const evaluate = async (name: string, corpus: ReadonlyArray<LabelledSentence & { shape?: string }>) => {
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
  // Structured recall by shape, to see which layouts leak.
  const byShape: Record<string, TypeScore> = {}
  const shapes = [...new Set(corpus.map((c) => c.shape).filter((s) => s !== undefined))]
  for (const shape of shapes) {
    const idx = corpus.flatMap((c, i) => (c.shape === shape ? [i] : []))
    byShape[shape!] = scoreCorpus(idx.map((i) => corpus[i]!), idx.map((i) => predictions[i]!)).structured
  }
  if (shapes.length > 0) {
    console.log("\nstructured by shape    TP   FP   FN  precision  recall      F1")
    for (const [shape, s] of Object.entries(byShape)) console.log(row(shape, s))
  }
  return { result, byShape, msPerItem: elapsedMs / corpus.length }
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
      dev: { ...summary(dev.result), byShape: dev.byShape, errors: dev.result.errors },
      heldOut: { ...summary(heldOut.result), byShape: heldOut.byShape, errorCount: heldOut.result.errors.length },
      speed
    },
    null,
    2
  ) + "\n"
)
console.log("\nwrote bench/results/pii-eval.json")
