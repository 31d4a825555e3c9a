/**
 * Turns the raw phases of a run into the summary table, the issue's targets (PASS/FAIL) and the stage-cost table, as
 * markdown (printed and written to bench/results/latest.md). Paired metrics (gateway vs direct/bare) are computed
 * within each round first, then the median over rounds, so a noisy moment hits both sides of a pair.
 */
import type { PhaseResult } from "./load.ts"
import { DISTURBED_FOREIGN_CORES, type MachineReference } from "./machineReference.ts"
import { median } from "./stats.ts"

/**
 * direct: the fake provider; bare: the thinnest Node hop; gateway: one funded tenant (the hot tenant at c=64);
 * tenants: TENANT_COUNT funded tenants, round-robin; proxy-off / proxy-builtin: the local proxy in front of the
 * gateway (the user's real path) with the name model off / built in; portkey: a peer gateway (`npm run bench:peers`);
 * responses: the same gateway and key on POST /api/v1/responses (c=1, beside `gateway` on chat completions).
 */
export type Target = "direct" | "bare" | "portkey" | "gateway" | "responses" | "tenants" | "proxy-off" | "proxy-builtin"
export const TARGETS: ReadonlyArray<Target> = ["direct", "bare", "portkey", "gateway", "responses", "tenants", "proxy-off", "proxy-builtin"]
export const PROXY_TARGETS: ReadonlyArray<Target> = ["proxy-off", "proxy-builtin"]
/** Scenario (e): this many funded tenants share the load round-robin. */
export const TENANT_COUNT = 200

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
  /** CPU time the target's own process used per answered request over the whole phase (warm-up and drain included) */
  readonly cpuMsPerRequest: number
  /** proxy phases: the gateway's CPU time per answered request (the rest of the user's path) */
  readonly gatewayCpuMsPerRequest?: number
  /** the machine's 1-minute load average at the end of the phase (other helpers' work included) */
  readonly loadAvg1?: number
  /** cores' worth of CPU used by processes outside the run during the phase (machineReference.ts foreignCores) */
  readonly foreignCpuCores?: number
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
  readonly gatewayCpuMsPerRequest: number | undefined
  readonly storageCpuMsPerRequest: number
  readonly loadAvg1: number
  /** the most any round's phase lost to other processes, in cores */
  readonly foreignCpuCores: number
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
  /** CPU ms per call of the processes on the measured path (gateway; proxy + gateway), median over rounds */
  readonly cpu: string
  /** 1-minute load average at the end of the measured phases (median), so a noisy verdict can be recognised */
  readonly load: number
}

const select = (phases: ReadonlyArray<PhaseRecord>, stream: boolean, concurrency: number, target: Target) =>
  phases.filter((p) => p.stream === stream && p.concurrency === concurrency && p.target === target)

export const summarise = (phases: ReadonlyArray<PhaseRecord>): SummaryRow[] => {
  const rows: SummaryRow[] = []
  const concurrencies = [...new Set(phases.map((p) => p.concurrency))].sort((a, b) => a - b)
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
          gatewayCpuMsPerRequest: ps.every((p) => p.gatewayCpuMsPerRequest !== undefined) ? median(ps.map((p) => p.gatewayCpuMsPerRequest!)) : undefined,
          storageCpuMsPerRequest: median(ps.map((p) => p.storageCpuMsPerRequest ?? 0)),
          loadAvg1: median(ps.map((p) => p.loadAvg1 ?? Number.NaN)),
          foreignCpuCores: Math.max(...ps.map((p) => p.foreignCpuCores ?? Number.NaN)),
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

/** Per round: f(subject, other) for one scenario; rounds missing a side are skipped. */
const paired = (
  phases: ReadonlyArray<PhaseRecord>,
  stream: boolean,
  concurrency: number,
  other: Target,
  f: (subject: PhaseResult, other: PhaseResult) => number,
  subject: Target = "gateway"
) => {
  const out: number[] = []
  for (const g of select(phases, stream, concurrency, subject)) {
    const o = select(phases, stream, concurrency, other).find((p) => p.round === g.round)
    if (o !== undefined) out.push(f(g.result, o.result))
  }
  return out
}

/**
 * The targets of issue 24 for PostgreSQL + Redis. Embedded storage (PGlite + in-process state) is allowed 1.5x on
 * (a)-(d) and its own memory ceiling; (e), (g), (h) are the same for both.
 */
export const targetsFor = (storage: "postgres" | "pglite") => {
  const slack = storage === "postgres" ? 1 : 1.5
  return {
    addedP50Ms: 1.5 * slack,
    rpsVsBarePct: 15 / slack,
    streamTtfbMs: 1.0 * slack,
    cpuMsPerCall: 0.8 * slack,
    hotTenantPct: 70,
    peakRssMiB: storage === "postgres" ? 300 : 450,
    proxyOffAddedP50Ms: 3,
    proxyBuiltinAddedP50Ms: 5,
    proxyRpsVsBarePct: 10,
    // Issue 34's Speed item, the same for both storages: the Responses route is the chat route plus its shape checks.
    responsesAddedP50Ms: 0.2,
    responsesDetokeniseMsPerEvent: 0.2
  }
}

/** CPU ms per call of `target`'s process (and the gateway's behind a proxy) in one scenario, median over rounds. */
const cpuOf = (phases: ReadonlyArray<PhaseRecord>, stream: boolean, concurrency: number, target: Target): string => {
  const ps = select(phases, stream, concurrency, target)
  if (ps.length === 0) return "n/a"
  const own = median(ps.map((p) => p.cpuMsPerRequest))
  if (!PROXY_TARGETS.includes(target)) return `${target === "tenants" || target === "responses" ? "gateway" : target} ${f(own)}`
  return `proxy ${f(own)} + gateway ${f(median(ps.map((p) => p.gatewayCpuMsPerRequest ?? Number.NaN)))}`
}

const loadOf = (phases: ReadonlyArray<PhaseRecord>, stream: boolean, concurrency: number, targets: ReadonlyArray<Target>) =>
  median(phases.filter((p) => p.stream === stream && p.concurrency === concurrency && targets.includes(p.target)).map((p) => p.loadAvg1 ?? Number.NaN))

export const verdicts = (
  phases: ReadonlyArray<PhaseRecord>,
  storage: "postgres" | "pglite",
  gatewayPeakRssMiB: number,
  responsesDetokeniseMsPerEvent?: number
): Verdict[] => {
  const t = targetsFor(storage)
  const out: Verdict[] = []
  const add = (
    name: string,
    perRound: number[],
    unit: string,
    target: string,
    pass: (v: number) => boolean,
    where: { stream: boolean; concurrency: number; target: Target; with?: ReadonlyArray<Target> }
  ) => {
    const value = median(perRound)
    out.push({
      name,
      value,
      unit,
      target,
      pass: Number.isFinite(value) && pass(value),
      perRound,
      cpu: cpuOf(phases, where.stream, where.concurrency, where.target),
      load: loadOf(phases, where.stream, where.concurrency, [where.target, ...(where.with ?? [])])
    })
  }
  const ms = (v: number) => `≤ ${f(v)} ms`
  const rpsRatio = (g: PhaseResult, b: PhaseResult) => (100 * g.rps) / b.rps
  add("(a) added p50 over direct, non-streamed, c=1", paired(phases, false, 1, "direct", (g, d) => g.latencyP50Ms - d.latencyP50Ms), "ms",
    ms(t.addedP50Ms), (v) => v <= t.addedP50Ms, { stream: false, concurrency: 1, target: "gateway", with: ["direct"] })
  add("(b) requests/s vs the bare hop, non-streamed, c=16", paired(phases, false, 16, "bare", rpsRatio), "%",
    `≥ ${f(t.rpsVsBarePct, 0)} %`, (v) => v >= t.rpsVsBarePct, { stream: false, concurrency: 16, target: "gateway", with: ["bare"] })
  add("(c) stream TTFB added over direct, c=1", paired(phases, true, 1, "direct", (g, d) => g.ttfbP50Ms - d.ttfbP50Ms), "ms",
    ms(t.streamTtfbMs), (v) => v <= t.streamTtfbMs, { stream: true, concurrency: 1, target: "gateway", with: ["direct"] })
  add("(d) gateway CPU per call, non-streamed, c=16", select(phases, false, 16, "gateway").map((p) => p.cpuMsPerRequest), "ms",
    ms(t.cpuMsPerCall), (v) => v <= t.cpuMsPerCall, { stream: false, concurrency: 16, target: "gateway" })
  add(`(e) ${TENANT_COUNT} tenants round-robin, c=64: requests/s vs the bare hop`, paired(phases, false, 64, "bare", rpsRatio, "tenants"), "%",
    `≥ ${f(t.rpsVsBarePct, 0)} % (as (b))`, (v) => v >= t.rpsVsBarePct, { stream: false, concurrency: 64, target: "tenants", with: ["bare"] })
  add(`(e) one hot tenant, c=64: requests/s vs ${TENANT_COUNT} tenants`, paired(phases, false, 64, "tenants", (g, m) => (100 * g.rps) / m.rps), "%",
    `≥ ${t.hotTenantPct} %`, (v) => v >= t.hotTenantPct, { stream: false, concurrency: 64, target: "gateway", with: ["tenants"] })
  out.push({
    name: "(f) gateway peak RSS over the run (VmHWM)",
    value: gatewayPeakRssMiB,
    unit: "MiB",
    target: `≤ ${t.peakRssMiB} MiB`,
    pass: gatewayPeakRssMiB <= t.peakRssMiB,
    perRound: [],
    cpu: "",
    load: median(phases.map((p) => p.loadAvg1 ?? Number.NaN))
  })
  for (const [target, limit] of [["proxy-off", t.proxyOffAddedP50Ms], ["proxy-builtin", t.proxyBuiltinAddedP50Ms]] as const) {
    add(`(g) local proxy -> gateway (names ${target.slice(6)}), added p50 over direct, c=1`,
      paired(phases, false, 1, "direct", (p, d) => p.latencyP50Ms - d.latencyP50Ms, target), "ms",
      ms(limit), (v) => v <= limit, { stream: false, concurrency: 1, target, with: ["direct"] })
  }
  for (const target of PROXY_TARGETS) {
    add(`(h) local proxy -> gateway (names ${target.slice(6)}), requests/s vs the bare hop, c=16`,
      paired(phases, false, 16, "bare", rpsRatio, target), "%",
      `≥ ${t.proxyRpsVsBarePct} %`, (v) => v >= t.proxyRpsVsBarePct, { stream: false, concurrency: 16, target, with: ["bare"] })
  }
  if (select(phases, false, 1, "responses").length > 0) {
    add("(i) Responses route p50 − chat route p50, non-streamed, c=1", paired(phases, false, 1, "gateway", (r, g) => r.latencyP50Ms - g.latencyP50Ms, "responses"), "ms",
      ms(t.responsesAddedP50Ms), (v) => v <= t.responsesAddedP50Ms, { stream: false, concurrency: 1, target: "responses", with: ["gateway"] })
    add("(i) Responses route p50 − chat route p50, streamed, c=1", paired(phases, true, 1, "gateway", (r, g) => r.latencyP50Ms - g.latencyP50Ms, "responses"), "ms",
      ms(t.responsesAddedP50Ms), (v) => v <= t.responsesAddedP50Ms, { stream: true, concurrency: 1, target: "responses", with: ["gateway"] })
  }
  if (responsesDetokeniseMsPerEvent !== undefined) {
    out.push({
      name: "(j) streamed Responses detokenisation per event (SDK/proxy SSE detokeniser, in-process)",
      value: responsesDetokeniseMsPerEvent,
      unit: "ms",
      target: ms(t.responsesDetokeniseMsPerEvent),
      pass: responsesDetokeniseMsPerEvent <= t.responsesDetokeniseMsPerEvent,
      perRound: [],
      cpu: "",
      load: Number.NaN
    })
  }
  return out
}

/** Context rows: the bare hop's own overhead and the same ratios at the other concurrencies. */
export const context = (phases: ReadonlyArray<PhaseRecord>) => {
  const concurrencies = [...new Set(phases.map((p) => p.concurrency))].sort((a, b) => a - b)
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
  add("Responses route stream TTFB p50 − chat route stream TTFB p50, c=1", paired(phases, true, 1, "gateway", (r, g) => r.ttfbP50Ms - g.ttfbP50Ms, "responses"), "ms")
  for (const stream of [false, true]) {
    for (const c of concurrencies) {
      add(`gateway RPS / bare RPS, ${stream ? "streamed" : "non-streamed"}, c=${c}`, paired(phases, stream, c, "bare", (g, b) => (100 * g.rps) / b.rps), "%")
    }
  }
  add(`${TENANT_COUNT} tenants RPS / (b)'s gateway RPS (one tenant, c=16)`, (() => {
    const out: number[] = []
    for (const m of select(phases, false, 64, "tenants")) {
      const g = select(phases, false, 16, "gateway").find((p) => p.round === m.round)
      if (g !== undefined) out.push((100 * m.result.rps) / g.result.rps)
    }
    return out
  })(), "%")
  for (const target of PROXY_TARGETS) {
    const names = target.slice(6)
    add(`proxy (names ${names}) p50 − gateway p50, non-streamed, c=1: what the proxy adds`, paired(phases, false, 1, "gateway", (p, g) => p.latencyP50Ms - g.latencyP50Ms, target), "ms")
    add(`proxy (names ${names}) stream TTFB p50 − direct, c=1`, paired(phases, true, 1, "direct", (p, d) => p.ttfbP50Ms - d.ttfbP50Ms, target), "ms")
    add(`proxy (names ${names}) RPS / gateway RPS, non-streamed, c=16`, paired(phases, false, 16, "gateway", (p, g) => (100 * p.rps) / g.rps, target), "%")
  }
  const peer = concurrencies.flatMap((c) => [
    [`Portkey RPS / bare RPS, non-streamed, c=${c}`, paired(phases, false, c, "bare", (p, b) => (100 * p.rps) / b.rps, "portkey"), "%"],
    [`user path (proxy, built-in names) RPS / Portkey RPS, non-streamed, c=${c}`, paired(phases, false, c, "portkey", (u, p) => (100 * u.rps) / p.rps, "proxy-builtin"), "%"],
    [`Portkey p50 − direct p50, non-streamed, c=${c}`, paired(phases, false, c, "direct", (p, d) => p.latencyP50Ms - d.latencyP50Ms, "portkey"), "ms"]
  ] as const)
  for (const [name, values, unit] of peer) add(name, values, unit)
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
  readonly machine: MachineReference
  /** phases other processes disturbed (machineReference.ts disturbanceWarnings) */
  readonly warnings: ReadonlyArray<string>
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
  if (meta.settings.quick === true) {
    lines.push("**Quick mode: one short round, no stage probes. Not comparable with a full run; use it to check the set-up, not to report a figure.**", "")
  }
  lines.push(...machineSection(meta.machine, input.summary), "")
  if (meta.warnings.length > 0) {
    lines.push(`**${meta.warnings.length} phase(s) disturbed by other processes** (more than ${DISTURBED_FOREIGN_CORES} of a core used outside the run):`, "")
    for (const w of meta.warnings) lines.push(`- ${w}`)
    lines.push("")
  }
  for (const n of meta.notes) lines.push(`- ${n}`)
  lines.push("", "## Targets (issue 24; median over rounds of per-round paired values)", "")
  lines.push("CPU ms/call: the named processes' CPU time per answered call in the measured scenario (warm-up and drain included). Load: the machine's 1-minute load average at the end of those phases (2 cores; anything above ~2 means other work competed).", "")
  lines.push(table(["check", "measured", "target", "verdict", "CPU ms/call", "load", "per round"], input.verdicts.map((v) => [
    v.name,
    `${f(v.value)} ${v.unit}`,
    v.target,
    v.pass ? "PASS" : "**FAIL**",
    v.cpu,
    f(v.load),
    v.perRound.map((x) => f(x)).join(", ")
  ])))
  lines.push("", table(["context", "value"], input.context.map((c) => [c.name, `${f(c.value)} ${c.unit}`])))
  lines.push("", "## Results (median over rounds; latency in ms; errors summed; RSS = peak of the target's own process; CPU ms/req = that process's CPU time per answered request over the whole phase, warm-up and drain included; gateway CPU = the gateway's behind a proxy; storage CPU ms/req = the same for the local PostgreSQL and Redis server processes; load = 1-minute load average at the phase's end)", "")
  lines.push(table(
    ["mode", "c", "target", "req/s", "req/s ÷ bare hop", "p50 − bare hop p50", "p50", "p99", "TTFB p50", "TTFB p99", "errors", "peak RSS MiB", "CPU ms/req", "gateway CPU ms/req", "storage CPU ms/req", "load", "foreign cores (max)"],
    input.summary.map((r) => [
      r.stream ? "stream" : "json",
      String(r.concurrency),
      r.target,
      f(r.rps, 0),
      f(r.rps / (bareOf(input.summary, r)?.rps ?? Number.NaN), 3),
      f(r.p50 - (bareOf(input.summary, r)?.p50 ?? Number.NaN)),
      f(r.p50),
      f(r.p99),
      r.stream ? f(r.ttfbP50) : "",
      r.stream ? f(r.ttfbP99) : "",
      String(r.errors),
      f(r.peakRssMiB, 1),
      f(r.cpuMsPerRequest),
      r.gatewayCpuMsPerRequest === undefined ? "" : f(r.gatewayCpuMsPerRequest),
      r.target === "direct" || r.target === "bare" || r.target === "portkey" ? "" : f(r.storageCpuMsPerRequest),
      f(r.loadAvg1),
      f(r.foreignCpuCores)
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

/** The bare hop's row of the same mode and concurrency: every result is read as a ratio to it. */
const bareOf = (summary: ReadonlyArray<SummaryRow>, row: SummaryRow) =>
  summary.find((b) => b.target === "bare" && b.stream === row.stream && b.concurrency === row.concurrency)

/** The machine reference: what this machine could do in this run, to set beside any figure read from it. */
const machineSection = (machine: MachineReference, summary: ReadonlyArray<SummaryRow>): string[] => {
  const bare = summary.filter((r) => r.target === "bare" && !r.stream)
  return [
    "## Machine reference (this run)",
    "",
    table(["reference", "value"], [
      ["cores", String(machine.cores)],
      ...bare.map((r) => [`bare Node hop, non-streamed, c=${r.concurrency}`, `${f(r.rps, 0)} req/s, p50 ${f(r.p50)} ms`]),
      ["ECDSA P-256 sign (node:crypto, before the servers started)", `${f(machine.ecdsaP256SignMicros, 1)} µs`],
      ["durable PostgreSQL commit (one-row INSERT, one connection)", machine.postgresCommitMs === undefined ? "n/a (embedded storage)" : `${f(machine.postgresCommitMs, 3)} ms`],
      ["load average before (1/5/15 min)", machine.loadBefore.map((x) => f(x)).join(" / ")],
      ["load average during (median of the phases' 1-minute)", f(machine.loadDuring)]
    ])
  ]
}
