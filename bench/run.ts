/**
 * `npm run bench`: the relay benchmark (issue 3 item 7, docs/benchmark.md).
 *
 * Starts the fake provider, a bare Node pass-through proxy (bench/bare-proxy.ts) and the gateway as separate
 * processes on 127.0.0.1, funds a key, and measures non-streamed and streamed chat completions against the three
 * targets at each concurrency, in interleaved rounds. Prints the results with the issue's three targets and a
 * stage-cost table, and writes bench/results/<timestamp>.json and bench/results/latest.md.
 *
 * Settings (environment): BENCH_SECONDS (measured seconds per phase, default 3), BENCH_WARMUP_SECONDS (0.5),
 * BENCH_ROUNDS (3), BENCH_CONCURRENCY ("1,16,64"), BENCH_STAGE_SECONDS (1.5, 0 = no stage probes),
 * DATABASE_URL / REDIS_URL (gateway on a fresh Postgres database / Redis prefix instead of embedded storage),
 * BENCH_PROFILE=1 (gateway under --cpu-prof; the report adds where its CPU went), BENCH_IDEMPOTENCY=0 (gateway
 * requests without their Idempotency-Key).
 */
import { gitCommit } from "./gitCommit.ts"
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  attestedPool,
  ATTESTATION_USE_LIMIT_MS,
  BENCH_IDEMPOTENCY,
  benchBody,
  freshRequest,
  type AttestedRequest
} from "./lib/attested.ts"
import { creditWallet, issueSelfServiceKey } from "./lib/funding.ts"
import { type PhaseResult, type PhaseSpec, runPhase } from "./lib/load.ts"
import {
  cpuMsOf,
  cpuMsOfCommands,
  freePort,
  killAllSync,
  memoryOf,
  RssSampler,
  type ServerProcess,
  startNodeProcess,
  stopAll,
  waitForHealthy,
  waitForUrlLine
} from "./lib/processes.ts"
import {
  context,
  markdown,
  type PhaseRecord,
  type RunMeta,
  STAGES,
  type StageRecord,
  stageRows,
  summarise,
  type Target,
  TARGETS,
  verdicts
} from "./lib/report.ts"
import { profileMarkdown, summariseProfile } from "./lib/profile.ts"
import { createBenchStorage, redactUrl, type BenchStorage } from "./lib/storage.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const resultsDir = join(root, "bench", "results")
/** Outside the repository: raw profiles are tens of MB and not results to commit. */
const profileDir = process.env.BENCH_PROFILE === "1" ? join(tmpdir(), `relay-bench-profile-${Date.now()}`) : undefined

const numberSetting = (name: string, fallback: number, min: number, max: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${name} must be a number between ${min} and ${max}`)
  return n
}

const settings = {
  seconds: numberSetting("BENCH_SECONDS", 3, 0.2, 120),
  warmupSeconds: numberSetting("BENCH_WARMUP_SECONDS", 0.5, 0, 10),
  rounds: Math.round(numberSetting("BENCH_ROUNDS", 3, 1, 20)),
  stageSeconds: numberSetting("BENCH_STAGE_SECONDS", 1.5, 0, 60),
  concurrency: (process.env.BENCH_CONCURRENCY ?? "1,16,64").split(",").map((s) => {
    const n = Number(s.trim())
    if (!Number.isInteger(n) || n < 1 || n > 512) throw new Error("BENCH_CONCURRENCY must list integers between 1 and 512")
    return n
  })
}
/** Limits high enough never to throttle the bench: it measures the cost of the checks, not their verdicts. */
const RATE_LIMITS_JSON = JSON.stringify({
  free: { keyPerMinute: null, tenantPer60s: 100_000_000, tenantPer3600s: 1_000_000_000, monthlyTokens: 1_000_000_000_000 }
})
const CREDIT_USD = "100000"
/** Local server processes whose CPU is the storage's share of a gateway call (0 when storage is embedded). */
const STORAGE_COMMANDS = ["postgres", "redis-server"]
/** PostgreSQL's statistics collector publishes a backend's counters about once a second (PGSTAT_MIN_INTERVAL). */
const STATS_FLUSH_WAIT_MS = 1_200
const CHAT_PATH = { direct: "/v1/chat/completions", bare: "/v1/chat/completions", gateway: "/api/v1/chat/completions" } as const

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`)

/** Environment for a child: the caller's (so PATH etc. hold), minus what could point a server elsewhere. */
const childEnv = (extra: Record<string, string>): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const k of ["DATABASE_URL", "REDIS_URL", "REDIS_PREFIX", "DATA_DIR", "PORT", "HOST", "LOCAL_PROVIDER_URL"]) delete env[k]
  for (const k of Object.keys(env)) if (k.startsWith("BENCH_") || k.startsWith("FAKE_PROVIDER_")) delete env[k]
  return { ...env, ...extra }
}


interface Servers {
  readonly fake: ServerProcess
  readonly bare: ServerProcess
  readonly gateway: ServerProcess
  readonly urls: Record<Target, string>
}

const startServers = async (storage: BenchStorage): Promise<Servers> => {
  const fake = startNodeProcess("fake-provider", join(root, "programs", "fake-provider.ts"), childEnv({
    FAKE_PROVIDER_HOST: "127.0.0.1",
    FAKE_PROVIDER_PORT: "0"
  }))
  const fakeUrl = await waitForUrlLine(fake, 15_000)
  const bare = startNodeProcess("bare-proxy", join(root, "bench", "bare-proxy.ts"), childEnv({ BARE_UPSTREAM_URL: fakeUrl, PORT: "0" }))
  const bareUrl = await waitForUrlLine(bare, 15_000)
  const port = await freePort()
  const gateway = startNodeProcess("gateway", join(root, "programs", "gateway.ts"), childEnv({
    ...storage.env,
    HOST: "127.0.0.1",
    PORT: String(port),
    LOCAL_PROVIDER_URL: fakeUrl,
    LOG_LEVEL: "warn",
    TRACE_SAMPLE_RATIO: "0",
    RATE_LIMITS_JSON
  }), profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`])
  const gatewayUrl = `http://127.0.0.1:${port}`
  await waitForHealthy(gateway, `${gatewayUrl}/healthz`, 90_000)
  return { fake, bare, gateway, urls: { direct: fakeUrl, bare: bareUrl, gateway: gatewayUrl } }
}

/** Hands out each pre-signed request once; signs inline (counted) if the pool runs dry. */
const oneShotSupplier = (pool: AttestedRequest[], stream: boolean, authorization: string) => {
  let i = 0
  let inline = 0
  return {
    next: (): AttestedRequest | Promise<AttestedRequest> => {
      const item = pool[i]
      if (item !== undefined) {
        pool[i++] = undefined as unknown as AttestedRequest // let the signed request be collected
        return item
      }
      inline++
      return freshRequest(stream, authorization)
    },
    inline: () => inline
  }
}

/** Cycles a small pool: the fake provider and the bare proxy do not check attestations, so re-use costs nothing. */
const cyclingSupplier = (pool: ReadonlyArray<AttestedRequest>) => {
  let i = 0
  return () => pool[i++ % pool.length]
}

/** Set while the run's database/prefix exists, so an interrupt still drops it. */
let activeStorage: BenchStorage | undefined

const main = async () => {
  const startedAt = new Date()
  const t0 = performance.now()
  const loadBefore = loadavg()
  const storage = await createBenchStorage(process.env)
  activeStorage = storage
  const storageLabel = `${storage.sql === "postgres" ? `PostgreSQL (${redactUrl(storage.databaseUrl!)})` : "embedded PGlite"} + ${storage.shared === "redis" ? `Redis (prefix ${storage.env.REDIS_PREFIX})` : "in-process shared state"}`
  log(`storage: ${storageLabel}`)
  let servers: Servers | undefined
  try {
    servers = await startServers(storage)
    const { urls } = servers
    log(`direct ${urls.direct}, bare ${urls.bare}, gateway ${urls.gateway}`)

    const funded = await issueSelfServiceKey(urls.gateway, "bench funded")
    const unfunded = await issueSelfServiceKey(urls.gateway, "bench unfunded")
    const credit = await creditWallet({
      gatewayUrl: urls.gateway,
      dataDir: storage.dataDir,
      databaseUrl: storage.databaseUrl,
      keyPrefix: funded.keyPrefix,
      usd: CREDIT_USD
    })
    log(`funded ${funded.keyPrefix} with $${CREDIT_USD} via ${credit.via}`)
    const auth = `Bearer ${funded.apiKey}`

    // One call of each kind to each target before measuring: a broken set-up fails here, loudly.
    for (const stream of [false, true]) {
      for (const target of TARGETS) {
        const req = await freshRequest(stream, auth)
        const res = await fetch(urls[target] + CHAT_PATH[target], { method: "POST", headers: req.headers, body: new Uint8Array(req.body) })
        const text = await res.text()
        if (res.status !== 200) throw new Error(`sanity call to ${target} (stream ${stream}) answered ${res.status}: ${text.slice(0, 300)}`)
      }
    }

    const sampler = new RssSampler([servers.fake.pid, servers.bare.pid, servers.gateway.pid])
    sampler.start()
    const ownProcess: Record<Target, number> = { direct: servers.fake.pid, bare: servers.bare.pid, gateway: servers.gateway.pid }
    const phaseMs = (settings.warmupSeconds + settings.seconds) * 1000
    if (phaseMs > ATTESTATION_USE_LIMIT_MS) throw new Error("a phase must fit in the 250 s an attestation pool is used for")

    const phases: PhaseRecord[] = []
    const stages: StageRecord[] = []
    const lastGatewayRps = new Map<string, number>()
    const cyclePools = {
      false: await attestedPool(64, false, auth),
      true: await attestedPool(64, true, auth)
    }

    const base = (origin: string, path: string, concurrency: number, seconds: number): Omit<PhaseSpec, "next"> => ({
      origin,
      path,
      concurrency,
      warmupMs: settings.warmupSeconds * 1000,
      measureMs: seconds * 1000,
      requestTimeoutMs: 30_000
    })

    for (let round = 1; round <= settings.rounds; round++) {
      // Rotating the order each round keeps "who ran first after a pause" from favouring one target.
      const order = TARGETS.map((_, i) => TARGETS[(i + round - 1) % TARGETS.length])
      for (const stream of [false, true]) {
        for (const concurrency of settings.concurrency) {
          for (const target of order) {
            let inline = () => 0
            let next: PhaseSpec["next"]
            if (target === "gateway") {
              const key = `${stream}:${concurrency}`
              // Sized from the last measurement of this scenario, with a floor: a phase that completed nothing
              // (all answers slower than the window) must not leave the next one signing inline.
              const expected = Math.max(lastGatewayRps.get(key) ?? (concurrency === 1 ? 1_500 : 4_000), 200) * 1.5
              const size = Math.min(80_000, Math.ceil(expected * (phaseMs / 1000)) + concurrency * 4)
              const supplier = oneShotSupplier(await attestedPool(size, stream, auth), stream, auth)
              next = supplier.next
              inline = supplier.inline
            } else {
              next = cyclingSupplier(cyclePools[`${stream}`])
            }
            sampler.reset()
            const countersBefore = target === "gateway" ? await storage.statementCounters?.() : undefined
            const cpuBefore = cpuMsOf(ownProcess[target])
            const storageCpuBefore = cpuMsOfCommands(STORAGE_COMMANDS)
            const result = await runPhase({ ...base(urls[target], CHAT_PATH[target], concurrency, settings.seconds), next })
            sampler.sample()
            const cpuAfter = cpuMsOf(ownProcess[target])
            const storageCpuAfter = cpuMsOfCommands(STORAGE_COMMANDS)
            let postgres: PhaseRecord["postgres"]
            if (countersBefore !== undefined && storage.statementCounters !== undefined) {
              // PostgreSQL publishes a backend's statistics about once a second; wait so the phase's last second counts.
              await new Promise((r) => setTimeout(r, STATS_FLUSH_WAIT_MS))
              const after = await storage.statementCounters()
              postgres = {
                settleMsPerRequest: (after.settleMs - countersBefore.settleMs) / result.requests,
                settleCallsPerRequest: (after.settleCalls - countersBefore.settleCalls) / result.requests,
                commitsPerRequest: (after.commits - countersBefore.commits) / result.requests
              }
            }
            if (target === "gateway") lastGatewayRps.set(`${stream}:${concurrency}`, result.rps)
            phases.push({ round, stream, concurrency, target, result, peakRssKiB: sampler.peakKiB(ownProcess[target]), inlineSigned: inline(),
              cpuMsPerRequest: (cpuAfter - cpuBefore) / result.requests,
              storageCpuMsPerRequest: (storageCpuAfter - storageCpuBefore) / result.requests,
              postgres })
            log(
              `round ${round} ${stream ? "stream" : "json  "} c=${String(concurrency).padStart(2)} ${target.padEnd(7)} ` +
                `${result.rps.toFixed(0).padStart(6)} req/s p50 ${result.latencyP50Ms.toFixed(2)} ms p99 ${result.latencyP99Ms.toFixed(2)} ms` +
                (stream ? ` ttfb p50 ${result.ttfbP50Ms.toFixed(2)} ms` : "") +
                ` cpu ${phases[phases.length - 1].cpuMsPerRequest.toFixed(2)} ms/req` +
                (target === "gateway" ? ` storage cpu ${phases[phases.length - 1].storageCpuMsPerRequest.toFixed(2)} ms/req` : "") +
                (postgres === undefined ? "" : ` relay_settle ${postgres.settleMsPerRequest.toFixed(2)} ms/req in ${postgres.settleCallsPerRequest.toFixed(2)} calls/req, ${postgres.commitsPerRequest.toFixed(1)} commits/req`) +
                (result.errors > 0 ? ` errors ${result.errors} (${result.firstError})` : "") +
                (inline() > 0 ? ` (${inline()} signed inline)` : "")
            )
          }
        }
      }
      if (settings.stageSeconds > 0) {
        for (const { name } of STAGES) {
          stages.push({ round, stage: name, result: await runStage(name, urls.gateway, funded.apiKey, unfunded.apiKey, base(urls.gateway, CHAT_PATH.gateway, 1, settings.stageSeconds), lastGatewayRps.get("false:1")) })
          const r = stages[stages.length - 1].result
          log(`round ${round} stage ${name.padEnd(15)} p50 ${r.latencyP50Ms.toFixed(2)} ms p99 ${r.latencyP99Ms.toFixed(2)} ms${r.errors > 0 ? ` unexpected ${r.errors} (${r.firstError})` : ""}`)
        }
      }
    }
    sampler.stop()

    const processPeakRssMiB = {
      "fake provider": memoryOf(servers.fake.pid).hwmKiB / 1024,
      "bare proxy": memoryOf(servers.bare.pid).hwmKiB / 1024,
      gateway: memoryOf(servers.gateway.pid).hwmKiB / 1024
    }
    const summary = summarise(phases, settings.concurrency)
    const checks = verdicts(phases)
    const ctx = context(phases, settings.concurrency)
    const directP50 = summary.find((r) => r.target === "direct" && !r.stream && r.concurrency === 1)?.p50 ?? Number.NaN
    const stageTable = stageRows(stages, directP50)
    const notes = [
      `Rate limits raised for the run (RATE_LIMITS_JSON=${RATE_LIMITS_JSON}) so the windows are checked on every call but never throttle it.`,
      "LOG_LEVEL=warn, TRACE_SAMPLE_RATIO=0 for the gateway. Load generator, servers and database share this machine's CPUs.",
      `Every gateway request carries its own v3 attestation (unique body, pre-signed right before its phase); ${phases.reduce((n, p) => n + p.inlineSigned, 0)} requests had to be signed inline.`,
      BENCH_IDEMPOTENCY
        ? "Every gateway request carries its own Idempotency-Key (fresh each time): admission, stored response and slot release are in every call."
        : "BENCH_IDEMPOTENCY=0: gateway requests carry no Idempotency-Key.",
      "Latency = request sent to last body byte; TTFB = request sent to first body byte (first SSE frame for streams).",
      `Machine load average (1/5/15 min) at start ${loadBefore.map((x) => x.toFixed(2)).join("/")}, at end ${loadavg().map((x) => x.toFixed(2)).join("/")} (includes anything else running here).`
    ]
    const meta: RunMeta = {
      startedAt: startedAt.toISOString(),
      durationS: (performance.now() - t0) / 1000,
      storage: storageLabel,
      node: process.version,
      cpus: `${availableParallelism()} × ${cpus()[0]?.model ?? "cpu"}`,
      commit: gitCommit(root),
      settings: { ...settings, creditUsd: CREDIT_USD },
      notes,
      processPeakRssMiB
    }
    let md = markdown({ meta, summary, verdicts: checks, context: ctx, stages: stageTable })
    if (profileDir !== undefined) {
      // The profile is written when the gateway exits, so stop it first (SIGTERM: a graceful exit).
      await servers.gateway.stop()
      const profile = summariseProfile(profileDir, root)
      md += profile === undefined ? "\n(no gateway CPU profile was written)\n" : profileMarkdown(profile)
    }
    process.stdout.write("\n" + md)

    mkdirSync(resultsDir, { recursive: true })
    const stamp = startedAt.toISOString().replaceAll(":", "-").replace(/\.\d+Z$/, "Z")
    const jsonPath = join(resultsDir, `${stamp}-${storage.sql}-${storage.shared}.json`)
    writeFileSync(jsonPath, JSON.stringify({ meta, verdicts: checks, context: ctx, summary, stages: stageTable, phases, stageRuns: stages }, null, 2) + "\n")
    writeFileSync(join(resultsDir, "latest.md"), md)
    writeFileSync(join(resultsDir, `latest-${storage.sql}-${storage.shared}.md`), md)
    log(`wrote ${jsonPath} and bench/results/latest.md`)
  } finally {
    await stopAll()
    activeStorage = undefined
    await storage.drop()
  }
}

/** One stage probe against the gateway at c=1: each stops one step later in the pipeline (report.ts STAGES). */
const runStage = async (
  name: string,
  gatewayUrl: string,
  apiKey: string,
  unfundedKey: string,
  spec: Omit<PhaseSpec, "next">,
  gatewayRps: number | undefined
): Promise<PhaseResult> => {
  const phaseSeconds = (spec.warmupMs + spec.measureMs) / 1000
  const poolSize = Math.min(40_000, Math.ceil(Math.max(gatewayRps ?? 1_500, 200) * 3 * phaseSeconds) + 16)
  const plain = { "content-type": "application/json" }
  switch (name) {
    case "healthz":
      return runPhase({ ...spec, path: "/healthz", method: "GET", next: () => ({ body: Buffer.alloc(0), headers: {} }) })
    case "401 bad key": {
      // Well-formed but unknown: the last base32 character changed.
      const bad = apiKey.slice(0, -1) + (apiKey.endsWith("a") ? "b" : "a")
      const req = { body: benchBody(0, false), headers: { ...plain, authorization: `Bearer ${bad}` } }
      return runPhase({ ...spec, expectStatus: 401, next: () => req })
    }
    case "403 no engine": {
      const req = { body: benchBody(0, false), headers: { ...plain, authorization: `Bearer ${apiKey}` } }
      return runPhase({ ...spec, expectStatus: 403, next: () => req })
    }
    case "402 unfunded": {
      const supplier = oneShotSupplier(await attestedPool(poolSize, false, `Bearer ${unfundedKey}`), false, `Bearer ${unfundedKey}`)
      return runPhase({ ...spec, expectStatus: 402, next: supplier.next })
    }
    case "200 full relay": {
      const supplier = oneShotSupplier(await attestedPool(poolSize, false, `Bearer ${apiKey}`), false, `Bearer ${apiKey}`)
      return runPhase({ ...spec, next: supplier.next })
    }
    default:
      throw new Error(`unknown stage ${name}`)
  }
}

process.on("exit", killAllSync)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the servers`)
    stopAll()
      .then(() => activeStorage?.drop())
      .finally(() => process.exit(130))
  })
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`[bench] failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
    stopAll().finally(() => process.exit(1))
  }
)
