/**
 * The markdown report of `npm run bench:engine` (bench/tokeniser.ts), from the run's JSON record, so a report
 * can be rebuilt from a stored bench/results/tokeniser-*.json.
 */
import type { NameModelTiming } from "./nameModelTiming.ts"

export const MB = 1024 * 1024
const TARGET_MS_PER_MB = 2000

export interface Measurement {
  readonly kind: "prose" | "repeated" | "digit-run" | "dotted-run" | "spaced-digits" | "dashed-digits"
  readonly bytes: number
  readonly runs: number
  /** median wall time of one request */
  readonly ms: number
  readonly msPerMB: number
  /** CPU time of the process (all threads) per run */
  readonly cpuMs: number
  /** longest time the calling thread's event loop could not run anything else, over all runs */
  readonly maxStallMs: number
  readonly valuesReplaced: Record<string, number>
}

export interface TokeniserRun {
  readonly startedAt: string
  readonly node: string
  readonly cpu: string
  readonly cpus: number
  readonly commit: string
  readonly loadAtStart: ReadonlyArray<number>
  readonly loadAtEnd: ReadonlyArray<number>
  readonly runs: number
  readonly results: ReadonlyArray<Measurement>
  /** The built-in name model alone (absent from runs before issue 40). */
  readonly nameModel?: NameModelTiming
}

const NAME_TARGET_2K_MS = 0.3
const NAME_TARGET_100K_MS = 30

const nameModelSection = (t: NameModelTiming | undefined): Array<string> => {
  if (t === undefined) return []
  const at100k = t.sizes.find((s) => s.bytes === 100 * 1024)
  const at1m = t.sizes.find((s) => s.bytes === MB)
  return [
    "",
    "## The built-in name model alone",
    "",
    "The portable name model (sdks/vectors/name-model.json), called on the calling thread on the same prose: a 2 KB prompt",
    "1,000 times after 200 warm-up calls, then each size at least 3 times (median). Linear when ms/MB stays flat. CPU is",
    "this process's; when the load average is above the number of cores, wall time includes waiting for a core.",
    "",
    "| text | wall ms | CPU ms | wall ms/MB | CPU ms/MB | names found |",
    "|---|---|---|---|---|---|",
    `| 2 KB prompt | p50 ${t.prompt2kP50Ms.toFixed(3)}, p95 ${t.prompt2kP95Ms.toFixed(3)} | p50 ${(t.prompt2kCpuP50Ms ?? Number.NaN).toFixed(3)} | | | |`,
    ...t.sizes.map((s) => `| ${label(s.bytes)} | ${s.ms.toFixed(2)} | ${(s.cpuMs ?? Number.NaN).toFixed(2)} | ${s.msPerMB.toFixed(0)} | ${(s.cpuMsPerMB ?? Number.NaN).toFixed(0)} | ${s.names} |`),
    "",
    "| target | value | limit | verdict |",
    "|---|---|---|---|",
    `| names, 2 KB prompt p50 (wall) | ${t.prompt2kP50Ms.toFixed(3)} ms | <= ${NAME_TARGET_2K_MS} ms | **${t.prompt2kP50Ms <= NAME_TARGET_2K_MS ? "PASS" : "FAIL"}** |`,
    ...(at100k === undefined
      ? []
      : [
          `| names, 100 KB (wall) | ${at100k.ms.toFixed(1)} ms | <= ${NAME_TARGET_100K_MS} ms | **${at100k.ms <= NAME_TARGET_100K_MS ? "PASS" : "FAIL"}** |`,
          `| names, 100 KB (CPU) | ${(at100k.cpuMs ?? Number.NaN).toFixed(1)} ms | <= ${NAME_TARGET_100K_MS} ms | **${at100k.cpuMs <= NAME_TARGET_100K_MS ? "PASS" : "FAIL"}** |`
        ]),
    ...(at100k === undefined || at1m === undefined
      ? []
      : [`| names, 1 MB CPU ms/MB over 100 KB CPU ms/MB (linear: about 1) | ${(at1m.cpuMsPerMB / at100k.cpuMsPerMB).toFixed(2)} | | |`])
  ]
}

export const label = (bytes: number) => (bytes >= MB ? `${bytes / MB} MB` : `${bytes / 1024} KB`)

const cpuPerMB = (m: Measurement) => (m.cpuMs / m.bytes) * MB

export const tokeniserReport = (run: TokeniserRun): string => {
  const atOneMB = (m: Measurement) => run.results.find((r) => r.kind === m.kind && r.bytes === MB)
  const row = (m: Measurement) => {
    const base = atOneMB(m)
    const scale = base === undefined ? "" : (cpuPerMB(m) / cpuPerMB(base)).toFixed(2)
    const found = Object.entries(m.valuesReplaced).map(([type, n]) => `${type} ${n}`).join(", ")
    return `| ${m.kind} | ${label(m.bytes)} | ${(m.ms / 1000).toFixed(3)} | ${(m.msPerMB / 1000).toFixed(2)} | ${(m.cpuMs / 1000).toFixed(3)} | ${(cpuPerMB(m) / 1000).toFixed(2)} | ${scale} | ${m.maxStallMs.toFixed(0)} | ${found} |`
  }
  const kinds = [...new Set(run.results.map((r) => r.kind))]
  const verdicts = kinds.flatMap((kind) => {
    const m = run.results.find((r) => r.kind === kind && r.bytes === MB)
    if (m === undefined) return []
    return [
      `| ${kind}, 1 MB | ${(m.ms / 1000).toFixed(2)} s wall (${(m.cpuMs / 1000).toFixed(2)} s CPU) | <= ${TARGET_MS_PER_MB / 1000} s | **${m.ms <= TARGET_MS_PER_MB ? "PASS" : "FAIL"}** |`
    ]
  })
  const load = (l: ReadonlyArray<number>) => l.map((x) => x.toFixed(2)).join("/")
  return [
    `# Tokeniser engine benchmark ${run.startedAt}`,
    "",
    `Node ${run.node} · ${run.cpus} × ${run.cpu} · commit ${run.commit} · built-in name model on · runs per size up to 1 MB: ${run.runs} (median), larger: 1`,
    `Machine load average (1/5/15 min) at start ${load(run.loadAtStart)}, at end ${load(run.loadAtEnd)} (includes anything else running here; wall times above the CPU times are time spent waiting for a core).`,
    "",
    "One chat completions request with one user message of the given size, tokenised as the local proxy does it (`tokeniseRequest`",
    "in a worker thread). CPU is this process's (all threads). The cost is linear when CPU s/MB is constant; `CPU × 1 MB` is",
    "CPU s/MB relative to the 1 MB row. The longest stall is the longest time the calling thread's event loop could not run",
    "anything else (in the proxy, a `/healthz` or SIGTERM would have waited that long).",
    "",
    "| text | size | wall s | wall s/MB | CPU s | CPU s/MB | CPU × 1 MB | longest stall ms | values replaced |",
    "|---|---|---|---|---|---|---|---|---|",
    ...run.results.map(row),
    "",
    "| target | value | limit | verdict |",
    "|---|---|---|---|",
    ...verdicts,
    ...nameModelSection(run.nameModel),
    ""
  ].join("\n")
}
