/**
 * `npm run bench:sdk`: what the TypeScript SDK's on-device engine adds to a call (issue 16, Speed).
 *
 *  - engine overhead per call on a 2 KB prompt with 5 identifiers: tokenise + attest (prepareCall, what the SDK does
 *    before sending) + detokenise the answer (detokeniseResponseText); p50 with names off and with the built-in
 *    name model;
 *  - a pasted document with names on: 10 KB / 100 KB / 1 MB of prose (bench/lib/sampleText.ts), time and time per
 *    MB (constant when the cost is linear in the length);
 *  - streaming detokenisation per chunk (the SDK's SSE detokeniser over an OpenAI stream in 4-character deltas,
 *    aliases cut across chunks);
 *  - the browser bundle (the browser entry with all its dependencies, minified, split as a bundler splits it),
 *    gzipped: what a page loads at start, and the built-in name model's chunk, loaded on first use.
 * Prints a table with the targets and verdicts, writes bench/results/sdk-latest.json and .md.
 * BENCH_RUNS (default 200) sets the iterations of the 2 KB measurements.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import { join } from "node:path"
import { packageEngine, splitBrowserBundle } from "../sdks/typescript/browserBundle.ts"
import { type Engine, nameModelOf, prepareCall } from "../sdks/typescript/src/engine.ts"
import { createSseDetokeniser } from "../sdks/typescript/src/sseDetokeniser.ts"
import { detokeniseResponseText } from "../sdks/typescript/src/client/detokeniseResponse.ts"
import { generateSigningKeyPair } from "../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { proseText } from "./lib/sampleText.ts"
import { median } from "./lib/stats.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { SDK_BENCH_SETTINGS } from "./settings/sdk.ts"

const resultsDir = join(import.meta.dirname, "results")
const { runs } = readBenchSettings("bench/sdk.ts", SDK_BENCH_SETTINGS)
const KB = 1024

/** About 2 KB of ordinary text carrying exactly 5 identifiers: a name, an e-mail, a phone, an IBAN, a card. */
const FILLER = "The quarterly review covered the budget for the northern office, the delays in the shipment of spare parts, and the plan to move the support team to the new ticketing system before the end of the year. "
const prompt2k = (() => {
  const identifiers = "Please ask Maria Garcia to write to maria.garcia@example.com, call +44 20 7946 0958, refund IBAN GB82 WEST 1234 5698 7654 32 and cancel card 4111 1111 1111 1111. "
  let text = identifiers
  while (text.length + FILLER.length <= 2 * KB) text += FILLER
  return text
})()

const deviceKey = await generateSigningKeyPair()
const engineWith = (names: "off" | "builtin"): Engine => ({
  identity: packageEngine(),
  deviceKey: async () => deviceKey,
  names: nameModelOf(names),
  stableAliasSecret: undefined
})

/** The answer a provider gives: the tokenised prompt echoed, in the OpenAI shape. */
const answerFor = (tokenisedBody: unknown) =>
  JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: `Echo: ${(tokenisedBody as { messages: Array<{ content: string }> }).messages[0]!.content}` }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
  })

/** One call's engine work: tokenise + attest, then restore the originals in the answer. */
const engineCall = async (engine: Engine, text: string) => {
  const started = performance.now()
  const prepared = await prepareCall(engine, "chat.completions", { model: "local-chat", messages: [{ role: "user", content: text }] })
  const answer = answerFor(prepared.tokenisedBody)
  const restored = detokeniseResponseText(answer, prepared.map)
  const ms = performance.now() - started
  if (!restored.includes(text.slice(0, 40).replaceAll("\n", "\\n"))) throw new Error("detokenisation did not restore the prompt")
  return { ms, values: prepared.map.size }
}

const p50 = async (engine: Engine, text: string, count: number) => {
  for (let i = 0; i < Math.min(20, count); i++) await engineCall(engine, text) // warm-up
  const times: Array<number> = []
  let values = 0
  for (let i = 0; i < count; i++) {
    const r = await engineCall(engine, text)
    times.push(r.ms)
    values = r.values
  }
  return { p50: median(times), values }
}

const streamingPerChunk = async () => {
  const engine = engineWith("off")
  const prepared = await prepareCall(engine, "chat.completions", { model: "local-chat", stream: true, messages: [{ role: "user", content: prompt2k }] })
  const answer = `Echo: ${(prepared.tokenisedBody as { messages: Array<{ content: string }> }).messages[0]!.content}`
  const frames: Array<string> = []
  for (let i = 0; i < answer.length; i += 4) {
    frames.push(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: answer.slice(i, i + 4) }, finish_reason: null }] })}\n\n`)
  }
  frames.push(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`)
  const once = () => {
    const sse = createSseDetokeniser("chat.completions", prepared.map)
    let text = ""
    const started = performance.now()
    for (const frame of frames) for (const e of sse.push(frame)) text += (e.json as any)?.choices?.[0]?.delta?.content ?? ""
    for (const e of sse.end()) text += (e.json as any)?.choices?.[0]?.delta?.content ?? ""
    const ms = performance.now() - started
    if (!text.includes("maria.garcia@example.com")) throw new Error("the stream was not detokenised")
    return ms / frames.length
  }
  for (let i = 0; i < 20; i++) once()
  const perChunk: Array<number> = []
  for (let i = 0; i < Math.max(20, runs / 4); i++) perChunk.push(once())
  return { perChunkMs: median(perChunk), chunks: frames.length }
}

console.error(`bench:sdk: ${runs} runs per 2 KB measurement; load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`)
const namesOff = await p50(engineWith("off"), prompt2k, runs)
const namesOn = await p50(engineWith("builtin"), prompt2k, runs)
const documents: Array<{ bytes: number; ms: number; msPerMb: number }> = []
for (const bytes of [10 * KB, 100 * KB, 1024 * KB]) {
  const text = proseText(bytes)
  const count = bytes >= 1024 * KB ? 3 : bytes >= 100 * KB ? 7 : 21
  const { p50: ms } = await p50(engineWith("builtin"), text, count)
  documents.push({ bytes, ms, msPerMb: ms / (bytes / (1024 * KB)) })
}
const streaming = await streamingPerChunk()
const split = await splitBrowserBundle()
const bundle = {
  // What a page loads at start: the engine without the name model's code.
  withoutNameModel: split.atStart,
  // Loaded when the first text is scanned for names.
  nameModelChunk: split.nameModel,
  withNameModel: { files: split.atStart.files + split.nameModel.files, bytes: split.atStart.bytes + split.nameModel.bytes, gzipBytes: split.atStart.gzipBytes + split.nameModel.gzipBytes }
}

const doc100 = documents.find((d) => d.bytes === 100 * KB)!
const rows = [
  { what: `2 KB prompt, 5 identifiers, names off: tokenise+attest+detokenise p50`, value: namesOff.p50, unit: "ms", target: 1 },
  { what: `2 KB prompt, 5 identifiers, built-in names: p50`, value: namesOn.p50, unit: "ms", target: 5 },
  { what: `100 KB document, built-in names`, value: doc100.ms, unit: "ms", target: 50 },
  ...documents.filter((d) => d !== doc100).map((d) => ({ what: `${d.bytes / KB} KB document, built-in names (linearity)`, value: d.ms, unit: "ms", target: undefined })),
  { what: `streaming detokenisation per chunk (${streaming.chunks} chunks)`, value: streaming.perChunkMs, unit: "ms", target: 0.2 },
  { what: "browser bundle at start (engine without the name model), gzipped", value: bundle.withoutNameModel.gzipBytes / 1000, unit: "KB", target: 150 },
  { what: "built-in name model chunk, loaded on first use, gzipped", value: bundle.nameModelChunk.gzipBytes / 1000, unit: "KB", target: undefined },
  { what: "browser bundle with the built-in name model loaded, gzipped", value: bundle.withNameModel.gzipBytes / 1000, unit: "KB", target: undefined }
].map((r) => ({ ...r, verdict: r.target === undefined ? "reported" : r.value <= r.target ? "PASS" : "FAIL" }))

const format = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toFixed(3))
const table = [
  "| measurement | value | target | verdict |",
  "|---|---|---|---|",
  ...rows.map((r) => `| ${r.what} | ${format(r.value)} ${r.unit} | ${r.target === undefined ? "-" : `<= ${r.target} ${r.unit}`} | ${r.verdict} |`)
].join("\n")
const linearity = documents.map((d) => `${d.bytes / KB} KB: ${format(d.ms)} ms (${format(d.msPerMb)} ms per MB)`).join("; ")
const machine = `${cpus()[0]?.model ?? "unknown CPU"}, ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)} at the end, Node ${process.version}`

const result = {
  at: new Date().toISOString(),
  machine,
  runs,
  prompt2k: { bytes: prompt2k.length, valuesReplaced: { namesOff: namesOff.values, namesOn: namesOn.values } },
  engine2kP50Ms: { namesOff: namesOff.p50, builtinNames: namesOn.p50 },
  documentsBuiltinNames: documents,
  streaming,
  browserBundle: bundle,
  verdicts: rows.map(({ what, value, unit, target, verdict }) => ({ what, value, unit, target: target ?? null, verdict }))
}
mkdirSync(resultsDir, { recursive: true })
writeFileSync(join(resultsDir, "sdk-latest.json"), `${JSON.stringify(result, null, 2)}\n`)
const md = `# SDK engine benchmark (npm run bench:sdk)

${result.at}; ${machine}.

${table}

Linearity (built-in names, prose with a name every ~80 characters): ${linearity}.

The 2 KB prompt (${prompt2k.length} bytes) carries a name, an e-mail address, a phone number, an IBAN and a card number
(${namesOn.values} values replaced with names on, ${namesOff.values} with names off). Per call: tokenise + attest
(prepareCall) + restore the originals in the answer; p50 of ${runs} calls. Streaming: the SDK's SSE detokeniser over
an OpenAI stream of 4-character deltas. Bundle: the browser entry with every dependency, minified and split into
chunks (esbuild), each file gzipped at level 9: "at start" is the entry and the chunks it imports statically; the
built-in name model (compromise, gazetteer, name rules) is imported on first use, so it is a chunk of its own that a
page fetches only when it first scans a text for names (never with nameModel "off" or a name model service).
`
writeFileSync(join(resultsDir, "sdk-latest.md"), md)
console.log(table)
console.log(`\nLinearity: ${linearity}`)
