/**
 * `npm run bench:engine`: the client tokeniser on long requests (issue 14 item 1, docs/benchmark.md).
 *
 * Tokenises one chat completions request whose user message is 10 KB, 100 KB, 1 MB and 10 MB of prose and of
 * repeated text, with the built-in name model on, exactly as the local proxy does (tokeniseRequest in its
 * worker thread, workerTokeniser). For each it prints the time, the time per MB (constant when the cost is
 * linear), the longest stall of this thread's event loop (what the proxy's `/healthz` or SIGTERM would wait
 * for) and the values found, checks the 1 MB <= 2 s target, and writes bench/results/tokeniser-<timestamp>.json
 * and bench/results/latest-tokeniser.md.
 *
 * Settings (environment): BENCH_SIZES ("10KB,100KB,1MB,10MB"), BENCH_RUNS (runs per size up to 1 MB,
 * median reported; default 3; larger sizes run once).
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { workerTokeniser } from "../src/client/workerTokeniser.ts"
import { proseText, repeatedText } from "./lib/sampleText.ts"
import { median } from "./lib/stats.ts"

const root = join(import.meta.dirname, "..")
const resultsDir = join(root, "bench", "results")
const TARGET_MS_PER_MB = 2000
const MB = 1024 * 1024

const parseSize = (raw: string): number => {
  const m = /^(\d+)(KB|MB)$/i.exec(raw.trim())
  if (m === null) throw new Error(`BENCH_SIZES entries look like 10KB or 1MB, not ${JSON.stringify(raw)}`)
  return Number(m[1]) * (m[2]!.toUpperCase() === "KB" ? 1024 : MB)
}
const sizes = (process.env.BENCH_SIZES ?? "10KB,100KB,1MB,10MB").split(",").map(parseSize)
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? "3"))
const KINDS = { prose: proseText, repeated: repeatedText } as const

// One worker, as on a 2-core machine: one request is tokenised by one worker whatever the pool size.
const tokeniser = workerTokeniser({ kind: "builtin" }, { workers: 1 })
const tokenise = (body: unknown) => tokeniser.tokenise("chat.completions", body, new AbortController().signal)

const label = (bytes: number) => (bytes >= MB ? `${bytes / MB} MB` : `${bytes / 1024} KB`)

interface Measurement {
  readonly kind: keyof typeof KINDS
  readonly bytes: number
  readonly runs: number
  /** median wall time of one tokeniseRequest */
  readonly ms: number
  readonly msPerMB: number
  /** CPU time of this process for the median run's size (all runs averaged) */
  readonly cpuMs: number
  /** longest time the event loop could not run anything else, over all runs */
  readonly maxStallMs: number
  readonly valuesReplaced: Record<string, number>
}

const measure = async (kind: keyof typeof KINDS, bytes: number): Promise<Measurement> => {
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

const gitCommit = () => {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim()
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root, encoding: "utf8" }).trim() !== ""
    return dirty ? `${sha}+dirty` : sha
  } catch {
    return "unknown"
  }
}

const startedAt = new Date()
const loadAtStart = loadavg()
// Warm-up: loads the name library and compiles the hot paths, so the 10 KB row is not start-up cost.
await tokenise({ model: "m", messages: [{ role: "user", content: proseText(64 * 1024, 7) }] })

const results: Array<Measurement> = []
for (const kind of Object.keys(KINDS) as Array<keyof typeof KINDS>) {
  for (const bytes of sizes) {
    const m = await measure(kind, bytes)
    results.push(m)
    process.stderr.write(
      `[bench:engine] ${kind} ${label(bytes)}: ${(m.ms / 1000).toFixed(2)} s, ${(m.msPerMB / 1000).toFixed(2)} s/MB, longest stall ${m.maxStallMs.toFixed(0)} ms\n`
    )
  }
}
const loadAtEnd = loadavg()
await tokeniser.close()

const row = (m: Measurement) => {
  const atOneMB = results.find((r) => r.kind === m.kind && r.bytes === MB)
  const scale = atOneMB === undefined ? "" : `${(m.msPerMB / atOneMB.msPerMB).toFixed(2)}`
  const found = Object.entries(m.valuesReplaced).map(([type, n]) => `${type} ${n}`).join(", ")
  return `| ${m.kind} | ${label(m.bytes)} | ${(m.ms / 1000).toFixed(3)} | ${(m.cpuMs / 1000).toFixed(3)} | ${(m.msPerMB / 1000).toFixed(2)} | ${scale} | ${m.maxStallMs.toFixed(0)} | ${found} |`
}
const verdicts = (Object.keys(KINDS) as Array<keyof typeof KINDS>).flatMap((kind) => {
  const m = results.find((r) => r.kind === kind && r.bytes === MB)
  if (m === undefined) return []
  return [`| ${kind}, 1 MB | ${(m.ms / 1000).toFixed(2)} s | <= ${TARGET_MS_PER_MB / 1000} s | **${m.ms <= TARGET_MS_PER_MB ? "PASS" : "FAIL"}** |`]
})
const cpu = cpus()[0]?.model ?? "unknown CPU"
const report = [
  `# Tokeniser engine benchmark ${startedAt.toISOString()}`,
  "",
  `Node ${process.version} · ${availableParallelism()} × ${cpu} · commit ${gitCommit()} · built-in name model on · runs per size up to 1 MB: ${runs} (median), larger: 1`,
  `Machine load average (1/5/15 min) at start ${loadAtStart.map((x) => x.toFixed(2)).join("/")}, at end ${loadAtEnd.map((x) => x.toFixed(2)).join("/")} (includes anything else running here).`,
  "",
  "One chat completions request with one user message of the given size, tokenised as the local proxy does it (`tokeniseRequest`",
  "in a worker thread). `s/MB` is constant when the cost is linear; `× 1 MB` is s/MB relative to the 1 MB row. CPU s is this",
  "process's (all threads). The longest stall is the longest time the calling thread's event loop could not run anything",
  "else (in the proxy, a `/healthz` or SIGTERM would have waited that long).",
  "",
  "| text | size | wall s | CPU s | s/MB | × 1 MB | longest stall ms | values replaced |",
  "|---|---|---|---|---|---|---|---|",
  ...results.map(row),
  "",
  "| target | value | limit | verdict |",
  "|---|---|---|---|",
  ...verdicts,
  ""
].join("\n")

process.stdout.write(`${report}\n`)
mkdirSync(resultsDir, { recursive: true })
const stamp = startedAt.toISOString().replace(/:/g, "-").replace(/\.\d+Z$/, "Z")
writeFileSync(
  join(resultsDir, `tokeniser-${stamp}.json`),
  `${JSON.stringify({ startedAt: startedAt.toISOString(), node: process.version, cpu, cpus: availableParallelism(), commit: gitCommit(), loadAtStart, loadAtEnd, runs, results }, null, 2)}\n`
)
writeFileSync(join(resultsDir, "latest-tokeniser.md"), report)
