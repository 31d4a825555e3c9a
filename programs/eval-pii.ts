/**
 * Precision and recall of the client tokeniser's detectors on the labelled PII corpus
 * (test/fixtures/pii-corpus/corpus.jsonl). Prints a table and writes bench/results/pii-eval.json.
 * Run: npm run eval:pii
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createSession, detectSpans } from "../src/tokeniser/index.ts"
import { scoreCorpus, type LabelledSentence } from "../src/tokeniser/evaluateCorpus.ts"

const root = new URL("../", import.meta.url)
const corpus: Array<LabelledSentence> = readFileSync(new URL("test/fixtures/pii-corpus/corpus.jsonl", root), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as LabelledSentence)

// The default engine configuration: built-in name model, default phone regions.
const predictions = []
for (const sentence of corpus) predictions.push(await detectSpans(sentence.text, createSession()))
const result = scoreCorpus(corpus, predictions)

const pct = (x: number) => (x * 100).toFixed(1).padStart(6)
console.log(`PII corpus: ${result.sentences} sentences\n`)
console.log("type              TP   FP   FN  precision  recall      F1")
for (const [type, s] of Object.entries(result.perType)) {
  console.log(
    `${type.padEnd(16)} ${String(s.truePositives).padStart(3)}  ${String(s.falsePositives).padStart(3)}  ${String(s.falseNegatives).padStart(3)}  ${pct(s.precision)}%  ${pct(s.recall)}%  ${pct(s.f1)}%`
  )
}
const st = result.structured
console.log(`\nstructured (pooled, exact spans): precision ${pct(st.precision)}%  recall ${pct(st.recall)}%`)
const po = result.personOverlap
console.log(`PERSON exact F1 ${pct(result.perType.PERSON!.f1)}%   overlap F1 ${pct(po.f1)}% (precision ${pct(po.precision)}%, recall ${pct(po.recall)}%)`)
if (result.errors.length > 0) {
  console.log("\nerrors:")
  for (const e of result.errors) console.log(`  #${e.id} ${e.kind} ${e.type}: ${JSON.stringify(e.text)}`)
}

mkdirSync(new URL("bench/results/", root), { recursive: true })
writeFileSync(
  new URL("bench/results/pii-eval.json", root),
  JSON.stringify({ generated_at: new Date().toISOString(), ...result }, null, 2) + "\n"
)
console.log("\nwrote bench/results/pii-eval.json")
