/**
 * `npm run bench:engine`: the client tokeniser on long requests (issue 14 item 1, docs/benchmark.md).
 *
 * Tokenises one chat completions request whose user message is 10 KB, 100 KB, 1 MB and 10 MB of prose and of
 * repeated text, with the built-in name model on, exactly as the local proxy does (tokeniseRequest in its
 * worker thread, workerTokeniser). For each it prints the time, the time per MB (constant when the cost is
 * linear), the longest stall of this thread's event loop (what the proxy's `/healthz` or SIGTERM would wait
 * for) and the values found, checks the 1 MB <= 2 s target, times the built-in name model alone (2 KB prompt p50,
 * 10 KB / 100 KB / 1 MB; issue 40's targets), and writes bench/results/tokeniser-<timestamp>.json
 * and bench/results/latest-tokeniser.md.
 *
 * Settings (environment): BENCH_SIZES ("10KB,100KB,1MB,10MB"), BENCH_RUNS (runs per size up to 1 MB,
 * median reported; default 3; larger sizes run once), BENCH_KINDS ("prose,repeated,digit-run,dotted-run,spaced-digits,dashed-digits"; the last three are the shapes that
 * once overflowed the regex stack; a run of some
 * kinds only writes bench/results/latest-tokeniser-<kinds>.md, so latest-tokeniser.md stays a full run).
 */
import { gitCommit } from "./gitCommit.ts"
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { workerTokeniser } from "../sdks/typescript/src/proxy/workerTokeniser.ts"
import { dashedDigitsText, digitRunText, dottedRunText, proseText, repeatedText, spacedDigitsText } from "./lib/sampleText.ts"
import { label, MB, tokeniserReport, type Measurement, type TokeniserRun } from "./lib/tokeniserReport.ts"
import { median } from "./lib/stats.ts"
import { timeNameModel } from "./lib/nameModelTiming.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { TOKENISER_BENCH_SETTINGS, TOKENISER_KINDS } from "./settings/tokeniser.ts"

const root = join(import.meta.dirname, "..")
const resultsDir = join(root, "bench", "results")

const settings = readBenchSettings("bench/tokeniser.ts", TOKENISER_BENCH_SETTINGS)
const sizes = settings.sizes
const runs = settings.runs
const KINDS = { prose: proseText, repeated: repeatedText, "digit-run": digitRunText, "dotted-run": dottedRunText, "spaced-digits": spacedDigitsText, "dashed-digits": dashedDigitsText } as const satisfies Record<(typeof TOKENISER_KINDS)[number], (bytes: number) => string>
const kinds = settings.kinds

// One worker, as on a 2-core machine: one request is tokenised by one worker whatever the pool size.
const tokeniser = workerTokeniser({ kind: "builtin" }, { workers: 1 })
const tokenise = (body: unknown) => tokeniser.tokenise("chat.completions", body, new AbortController().signal)



const measure = async (kind: Measurement["kind"], bytes: number): Promise<Measurement> => {
  const text = KINDS[kind](bytes)
  const body = { model: "local-chat", messages: [{ role: "user", content: text }] }
  const count = bytes > MB ? 1 : runs
  const times: Array<number> = []
  let cpu = 0
  let valuesReplaced: Record<string, number> = {}
  const stalls = monitorEventLoopDelay({ resolution: 5 })
  stalls.enable()
  for (let i = 0; i < count; i++) {
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const out = await tokenise(body)
    times.push(performance.now() - t0)
    const used = process.cpuUsage(cpu0)
    cpu += (used.user + used.system) / 1000
    valuesReplaced = out.detectorsFired
  }
  stalls.disable()
  const ms = median(times)
  return {
    kind,
    bytes,
    runs: count,
    ms,
    msPerMB: (ms / bytes) * MB,
    cpuMs: cpu / count,
    maxStallMs: stalls.max / 1e6,
    valuesReplaced
  }
}


const startedAt = new Date()
const loadAtStart = loadavg()
// Warm-up: loads the name library and compiles the hot paths, so the 10 KB row is not start-up cost.
await tokenise({ model: "m", messages: [{ role: "user", content: proseText(64 * 1024, 7) }] })

const results: Array<Measurement> = []
for (const kind of kinds) {
  for (const bytes of sizes) {
    const m = await measure(kind, bytes)
    results.push(m)
    process.stderr.write(
      `[bench:engine] ${kind} ${label(bytes)}: ${(m.ms / 1000).toFixed(2)} s, ${(m.msPerMB / 1000).toFixed(2)} s/MB, longest stall ${m.maxStallMs.toFixed(0)} ms\n`
    )
  }
}
await tokeniser.close()
const nameModel = await timeNameModel(runs)
process.stderr.write(
  `[bench:engine] name model: 2 KB p50 ${nameModel.prompt2kP50Ms.toFixed(3)} ms; ${nameModel.sizes.map((s) => `${label(s.bytes)} ${s.ms.toFixed(1)} ms`).join(", ")}\n`
)
const loadAtEnd = loadavg()

const run: TokeniserRun = {
  startedAt: startedAt.toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown CPU",
  cpus: availableParallelism(),
  commit: gitCommit(root),
  loadAtStart,
  loadAtEnd,
  runs,
  results,
  nameModel
}
const report = tokeniserReport(run)
process.stdout.write(`${report}\n`)
mkdirSync(resultsDir, { recursive: true })
const stamp = startedAt.toISOString().replace(/:/g, "-").replace(/\.\d+Z$/, "Z")
writeFileSync(join(resultsDir, `tokeniser-${stamp}.json`), `${JSON.stringify(run, null, 2)}\n`)
const latest = kinds.length === TOKENISER_KINDS.length ? "latest-tokeniser.md" : `latest-tokeniser-${kinds.join("-")}.md`
writeFileSync(join(resultsDir, latest), report)
