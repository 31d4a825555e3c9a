/**
 * Turns the raw phases of a run into the summary table, the issue's three targets (PASS/FAIL) and the stage-cost
 * table, as markdown (printed and written to bench/results/latest.md). Paired metrics (gateway vs direct/bare) are
 * computed within each round first, then the median over rounds, so a noisy moment hits both sides of a pair.
 */
import type { PhaseResult } from "./load.ts"
import { median } from "./stats.ts"

export type Target = "direct" | "bare" | "gateway"
export const TARGETS: ReadonlyArray<Target> = ["direct", "bare", "gateway"]

export interface PhaseRecord {
  readonly round: number
  readonly stream: boolean
  readonly concurrency: number
  readonly target: Target
  readonly result: PhaseResult
  /** peak RSS of the target's own server process during the phase (direct: the fake provider) */
  readonly peakRssKiB: number
  /** gateway phases: requests signed on the fly because the pre-signed pool ran out */
  readonly inlineSigned: number
  /** CPU time the target's own process used per counted request over the whole phase (warm-up and drain included) */
  readonly cpuMsPerRequest: number
  /** CPU time of the local PostgreSQL and Redis server processes per counted request over the same window */
  readonly storageCpuMsPerRequest: number
  /** gateway phases on PostgreSQL: the database's own accounting, per counted request */
  readonly postgres?: {
    /** server time inside relay_settle (receipts, usage, ledger, debit, events) */
    readonly settleMsPerRequest: number
    /** relay_settle calls: below 1 when concurrent settlements share a batch */
    readonly settleCallsPerRequest: number
    /** committed transactions (holds, idempotency records, settlement, background work) */
    readonly commitsPerRequest: number
  }
}

export interface StageRecord {
  readonly round: number
  readonly stage: string
  readonly result: PhaseResult
}

export interface SummaryRow {
  readonly target: Target
  readonly stream: boolean
  readonly concurrency: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly ttfbP50: number
  readonly ttfbP99: number
  readonly errors: number
  readonly peakRssMiB: number
  readonly cpuMsPerRequest: number
  readonly storageCpuMsPerRequest: number
  readonly postgres: PhaseRecord["postgres"]
  readonly serverTiming: Record<string, number> | undefined
  readonly rounds: number
}

export interface Verdict {
  readonly name: string
  readonly value: number
  readonly unit: string
  readonly target: string
  readonly pass: boolean
  readonly perRound: ReadonlyArray<number>
}

const select = (phases: ReadonlyArray<PhaseRecord>, stream: boolean, concurrency: number, target: Target) =>
  phases.filter((p) => p.stream === stream && p.concurrency === concurrency && p.target === target)

export const summarise = (phases: ReadonlyArray<PhaseRecord>, concurrencies: ReadonlyArray<number>): SummaryRow[] => {
  const rows: SummaryRow[] = []
  for (const stream of [false, true]) {
    for (const concurrency of concurrencies) {
      for (const target of TARGETS) {
        const ps = select(phases, stream, concurrency, target)
        if (ps.length === 0) continue
        rows.push({
          target,
          stream,
          concurrency,
          rps: median(ps.map((p) => p.result.rps)),
          p50: median(ps.map((p) => p.result.latencyP50Ms)),
          p99: median(ps.map((p) => p.result.latencyP99Ms)),
          ttfbP50: median(ps.map((p) => p.result.ttfbP50Ms)),
          ttfbP99: median(ps.map((p) => p.result.ttfbP99Ms)),
          errors: ps.reduce((n, p) => n + p.result.errors, 0),
          peakRssMiB: Math.max(...ps.map((p) => p.peakRssKiB)) / 1024,
          cpuMsPerRequest: median(ps.map((p) => p.cpuMsPerRequest)),
          storageCpuMsPerRequest: median(ps.map((p) => p.storageCpuMsPerRequest ?? 0)),
          postgres: ps.every((p) => p.postgres !== undefined)
            ? {
              settleMsPerRequest: median(ps.map((p) => p.postgres!.settleMsPerRequest)),
              settleCallsPerRequest: median(ps.map((p) => p.postgres!.settleCallsPerRequest)),
              commitsPerRequest: median(ps.map((p) => p.postgres!.commitsPerRequest))
            }
            : undefined,
          serverTiming: medianTimings(ps.map((p) => p.result.serverTiming)),
          rounds: ps.length
        })
      }
    }
  }
  return rows
}

/** Stage by stage, the median over rounds of the per-round means; undefined when no round had the header. */
const medianTimings = (rounds: ReadonlyArray<Record<string, number> | undefined>): Record<string, number> | undefined => {
  const present = rounds.filter((r): r is Record<string, number> => r !== undefined)
  if (present.length === 0) return undefined
  const names = [...new Set(present.flatMap((r) => Object.keys(r)))]
  return Object.fromEntries(names.map((name) => [name, median(present.map((r) => r[name] ?? 0))]))
}

/** Per round: f(gateway, other) for one scenario; rounds missing a side are skipped. */
const paired = (
  phases: ReadonlyArray<PhaseRecord>,
  stream: boolean,
  concurrency: number,
  other: Target,
  f: (gateway: PhaseResult, other: PhaseResult) => number
) => {
  const out: number[] = []
  for (const g of select(phases, stream, concurrency, "gateway")) {
    const o = select(phases, stream, concurrency, other).find((p) => p.round === g.round)
    if (o !== undefined) out.push(f(g.result, o.result))
  }
  return out
}

const verdict = (name: string, perRound: number[], unit: string, target: string, pass: (v: number) => boolean): Verdict => {
  const value = median(perRound)
  return { name, value, unit, target, pass: Number.isFinite(value) && pass(value), perRound }
}

export const verdicts = (phases: ReadonlyArray<PhaseRecord>): Verdict[] => [
  verdict("(a) gateway p50 − direct p50, non-streamed, c=1", paired(phases, false, 1, "direct", (g, d) => g.latencyP50Ms - d.latencyP50Ms), "ms", "≤ 0.5 ms", (v) => v <= 0.5),
  verdict("(b) gateway RPS / bare-hop RPS, non-streamed, c=16", paired(phases, false, 16, "bare", (g, b) => (100 * g.rps) / b.rps), "%", "≥ 50 %", (v) => v >= 50),
  verdict("(c) stream TTFB p50 gateway − direct, c=1", paired(phases, true, 1, "direct", (g, d) => g.ttfbP50Ms - d.ttfbP50Ms), "ms", "≤ 1 ms", (v) => v <= 1)
]

/** Context rows: the bare hop's own overhead and the same ratios at the other concurrencies. */
export const context = (phases: ReadonlyArray<PhaseRecord>, concurrencies: ReadonlyArray<number>) => {
  const rows: Array<{ name: string; value: number; unit: string }> = []
  const add = (name: string, values: number[], unit: string) => {
    if (values.length > 0) rows.push({ name, value: median(values), unit })
  }
  const bareVsDirect = (stream: boolean, c: number, f: (b: PhaseResult, d: PhaseResult) => number) => {
    const out: number[] = []
    for (const b of select(phases, stream, c, "bare")) {
      const d = select(phases, stream, c, "direct").find((p) => p.round === b.round)
      if (d !== undefined) out.push(f(b.result, d.result))
    }
    return out
  }
  add("bare hop p50 − direct p50, non-streamed, c=1", bareVsDirect(false, 1, (b, d) => b.latencyP50Ms - d.latencyP50Ms), "ms")
  add("bare hop stream TTFB p50 − direct, c=1", bareVsDirect(true, 1, (b, d) => b.ttfbP50Ms - d.ttfbP50Ms), "ms")
  add("gateway p50 − bare hop p50, non-streamed, c=1", paired(phases, false, 1, "bare", (g, b) => g.latencyP50Ms - b.latencyP50Ms), "ms")
  for (const stream of [false, true]) {
    for (const c of concurrencies) {
      add(`gateway RPS / bare RPS, ${stream ? "streamed" : "non-streamed"}, c=${c}`, paired(phases, stream, c, "bare", (g, b) => (100 * g.rps) / b.rps), "%")
    }
  }
  return rows
}

export interface StageRow {
  readonly stage: string
  readonly p50: number
  readonly p99: number
  readonly rps: number
  readonly errors: number
  /** p50 minus the p50 of the probe it builds on (`after`): what this step adds */
  readonly adds: number
}

/** Each probe goes one step further than the probe it is compared with (`after`). */
export const STAGES: ReadonlyArray<{ readonly name: string; readonly after?: string; readonly what: string }> = [
  { name: "healthz", what: "GET /healthz: HTTP server, router and observability middleware floor" },
  { name: "401 bad key", after: "healthz", what: "POST relay, well-formed unknown key: + key hash and lookup (miss), error body" },
  { name: "403 no engine", after: "healthz", what: "POST relay, valid key, no X-Service-Engine: + key lookup (hit), scope check, body read" },
  { name: "402 unfunded", after: "403 no engine", what: "valid key + valid attestation, empty wallet: + attestation verify (ECDSA P-256, JCS SHA-256), shape, model route, rate-limit windows, balance hold (refused)" },
  { name: "200 full relay", after: "402 unfunded", what: "the full call: + upstream call (minus the direct p50), response read, metering/settlement in one transaction, receipt" }
]

export const stageRows = (stages: ReadonlyArray<StageRecord>, directP50: number): StageRow[] => {
  const rows: StageRow[] = []
  const p50Of = (name: string | undefined) =>
    name === undefined ? Number.NaN : median(stages.filter((s) => s.stage === name).map((s) => s.result.latencyP50Ms))
  for (const { name, after } of STAGES) {
    const rs = stages.filter((s) => s.stage === name)
    if (rs.length === 0) continue
    const p50 = p50Of(name)
    rows.push({
      stage: name,
      p50,
      p99: median(rs.map((s) => s.result.latencyP99Ms)),
      rps: median(rs.map((s) => s.result.rps)),
      errors: rs.reduce((n, s) => n + s.result.errors, 0),
      adds: p50 - p50Of(after) - (name === "200 full relay" ? directP50 : 0)
    })
  }
  return rows
}

const f = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : "n/a")

const table = (header: string[], rows: string[][]) =>
  [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n")

export interface RunMeta {
  readonly startedAt: string
  readonly durationS: number
  readonly storage: string
  readonly node: string
  readonly cpus: string
  readonly commit: string
  readonly settings: Record<string, unknown>
  readonly notes: ReadonlyArray<string>
  readonly processPeakRssMiB: Record<string, number>
}

export const markdown = (input: {
  readonly meta: RunMeta
  readonly summary: ReadonlyArray<SummaryRow>
  readonly verdicts: ReadonlyArray<Verdict>
  readonly context: ReadonlyArray<{ name: string; value: number; unit: string }>
  readonly stages: ReadonlyArray<StageRow>
}): string => {
  const { meta } = input
  const lines: string[] = []
  lines.push(`# Benchmark ${meta.startedAt}`, "")
  lines.push(`Storage: **${meta.storage}** · Node ${meta.node} · ${meta.cpus} · commit ${meta.commit} · ${f(meta.durationS, 0)} s`, "")
  lines.push(`Settings: ${Object.entries(meta.settings).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")}`, "")
  for (const n of meta.notes) lines.push(`- ${n}`)
  lines.push("", "## Targets (median over rounds of per-round paired values)", "")
  lines.push(table(["check", "value", "target", "verdict", "per round"], input.verdicts.map((v) => [
    v.name,
    `${f(v.value)} ${v.unit}`,
    v.target,
    v.pass ? "PASS" : "**FAIL**",
    v.perRound.map((x) => f(x)).join(", ")
  ])))
  lines.push("", table(["context", "value"], input.context.map((c) => [c.name, `${f(c.value)} ${c.unit}`])))
  lines.push("", "## Results (median over rounds; latency in ms; errors summed; RSS = peak of the target's own process; CPU ms/req = that process's CPU time per counted request, warm-up and drain included, so an upper bound; storage CPU ms/req = the same for the local PostgreSQL and Redis server processes, shown for the gateway)", "")
  lines.push(table(
    ["mode", "c", "target", "req/s", "p50", "p99", "TTFB p50", "TTFB p99", "errors", "peak RSS MiB", "CPU ms/req", "storage CPU ms/req"],
    input.summary.map((r) => [
      r.stream ? "stream" : "json",
      String(r.concurrency),
      r.target,
      f(r.rps, 0),
      f(r.p50),
      f(r.p99),
      r.stream ? f(r.ttfbP50) : "",
      r.stream ? f(r.ttfbP99) : "",
      String(r.errors),
      f(r.peakRssMiB, 1),
      f(r.cpuMsPerRequest),
      r.target === "gateway" ? f(r.storageCpuMsPerRequest) : ""
    ])
  ))
  const timed = input.summary.filter((r) => r.target === "gateway" && !r.stream && r.serverTiming !== undefined)
  if (timed.length > 0) {
    const names = [...new Set(timed.flatMap((r) => Object.keys(r.serverTiming!)))]
    lines.push("", "## Where a gateway call's time goes (non-streamed; the gateway's own Server-Timing header, mean ms per call, median over rounds)", "")
    lines.push("`upstream` includes the provider's own time; `settle` is signing the receipts and the settlement statement; `total` is the gateway's whole handling (the client's latency adds the network and HTTP parsing).", "")
    lines.push(table(["stage", ...timed.map((r) => `c=${r.concurrency}`)], names.map((name) => [name, ...timed.map((r) => f(r.serverTiming![name] ?? 0, 3))])))
  }
  const pgRows = input.summary.filter((r) => r.target === "gateway" && r.postgres !== undefined)
  if (pgRows.length > 0) {
    lines.push("", "## PostgreSQL's own accounting per gateway call (pg_stat_user_functions, pg_stat_database; median over rounds)", "")
    lines.push(table(
      ["mode", "c", "relay_settle server ms/req", "relay_settle calls/req", "commits/req"],
      pgRows.map((r) => [r.stream ? "stream" : "json", String(r.concurrency), f(r.postgres!.settleMsPerRequest, 3), f(r.postgres!.settleCallsPerRequest), f(r.postgres!.commitsPerRequest, 1)])
    ))
  }
  lines.push("", `Peak RSS over the whole run (VmHWM): ${Object.entries(meta.processPeakRssMiB).map(([k, v]) => `${k} ${f(v, 1)} MiB`).join(", ")}`)
  if (input.stages.length > 0) {
    lines.push("", "## Where the gateway's time goes (c=1, non-streamed, median p50 over rounds)", "")
    lines.push("Each probe is refused one step further into the pipeline; \"adds\" = its p50 minus the p50 of the probe it builds on (for the full relay also minus the direct upstream p50). Medians of noisy samples: small negative values mean \"below the noise\".", "")
    lines.push(table(["probe", "p50 ms", "p99 ms", "req/s", "adds ms", "what it covers"], input.stages.map((s) => [
      `${s.stage}${STAGES.find((x) => x.name === s.stage)?.after ? ` (vs ${STAGES.find((x) => x.name === s.stage)!.after})` : ""}`,
      f(s.p50),
      f(s.p99),
      f(s.rps, 0),
      f(s.adds),
      STAGES.find((x) => x.name === s.stage)?.what ?? ""
    ])))
  }
  return lines.join("\n") + "\n"
}
