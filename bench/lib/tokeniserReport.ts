/**
 * The markdown report of `npm run bench:engine` (bench/tokeniser.ts), from the run's JSON record, so a report
 * can be rebuilt from a stored bench/results/tokeniser-*.json.
 */
export const MB = 1024 * 1024
const TARGET_MS_PER_MB = 2000

export interface Measurement {
  readonly kind: "prose" | "repeated" | "digit-run"
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
    ""
  ].join("\n")
}
