/**
 * `npm run bench`: the relay benchmark (issue 24, docs/benchmark.md).
 *
 * Starts the fake provider, a bare Node pass-through proxy (bench/bare-proxy.ts), the gateway and two local proxies
 * (programs/proxy.ts in front of the gateway, names off and built-in: the user's real path) as separate processes on
 * 127.0.0.1, funds one key and TENANT_COUNT tenants, and measures non-streamed and streamed chat completions at
 * each concurrency, target by target in interleaved rounds; at c=1 also the gateway's Responses route (`responses`, the same
 * turn as POST /api/v1/responses) beside its chat route, and in-process the streamed Responses detokenisation per event. Prints issue 24's table with verdicts, the CPU per call
 * and the load average beside every result, a stage-cost table, and writes bench/results/<timestamp>.json and
 * bench/results/latest.md.
 *
 * Settings (environment): BENCH_QUICK=1 (a ~2-minute run), BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONCURRENCY,
 * BENCH_PROFILE, BENCH_PEERS=portkey (`npm run bench:peers`), DATABASE_URL / REDIS_URL and the others of
 * bench/settings/run.ts, each with its default and what it allows in docs/benchmark.md ("Settings"); all are read
 * before anything starts, and a bad value stops the run with one line and exit status 2.
 */
import { gitCommit } from "./gitCommit.ts"
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  attestedPool,
  ATTESTATION_USE_LIMIT_MS,
  benchBody,
  freshRequest,
  type AttestedRequest,
  type BenchRoute
} from "./lib/attested.ts"
import { BENCH_RATE_LIMITS_JSON, benchChildEnv, startBenchFakeProvider, startBenchGateway } from "./lib/benchGateway.ts"
import { creditWallet, issueSelfServiceKey } from "./lib/funding.ts"
import { measureResponsesStreamDetokenise } from "./lib/responsesStreamDetokenise.ts"
import { type PhaseResult, type PhaseSpec, runPhase } from "./lib/load.ts"
import {
  cpuMsOf,
  cpuMsOfCommands,
  killAllSync,
  memoryOf,
  RssSampler,
  type ServerProcess,
  startNodeProcess,
  stopAll,
  waitForUrlLine
} from "./lib/processes.ts"
import { PROXY_HEADERS, proxyBody, type ProxyTarget, startProxyTarget } from "./lib/proxyTarget.ts"
import { type PortkeyTarget, startPortkeyTarget } from "./lib/portkeyTarget.ts"
import {
  context,
  markdown,
  type PhaseRecord,
  PROXY_TARGETS,
  type RunMeta,
  STAGES,
  type StageRecord,
  stageRows,
  summarise,
  type Target,
  TENANT_COUNT,
  verdicts
} from "./lib/report.ts"
import { median } from "./lib/stats.ts"
import { profileFiles, profileMarkdown, summariseProfile } from "./lib/profile.ts"
import { createBenchStorage, redactUrl, type BenchStorage } from "./lib/storage.ts"
import { readBenchSettings, storageEnv } from "./lib/benchSettings.ts"
import { RUN_SETTINGS } from "./settings/run.ts"
import {
  disturbanceWarnings,
  ecdsaP256SignMicros,
  foreignCores,
  machineBusyMs,
  type MachineReference,
  ownCpuMs,
  postgresCommitMs
} from "./lib/machineReference.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const resultsDir = join(root, "bench", "results")
/** Every setting, read before anything starts: a bad value stops the run with one line (bench/settings/run.ts). */
const read = readBenchSettings("bench/run.ts", RUN_SETTINGS)
const quick = read.quick
/** Outside the repository: raw profiles are tens of MB and not results to commit. */
const profileDir = read.profile !== undefined ? join(tmpdir(), `relay-bench-profile-${Date.now()}`) : undefined

/** The run's settings as its report records them. */
const settings = {
  quick,
  seconds: read.seconds,
  warmupSeconds: read.warmupSeconds,
  rounds: read.rounds,
  stageSeconds: read.stageSeconds,
  concurrency: [...read.concurrency],
  proxy: read.proxy,
  peers: [...read.peers]
}
/** Scenario (e)'s concurrency: the many tenants and the one hot tenant are both measured here. */
const TENANT_CONCURRENCY = 64
/** The local proxy serves one user: measured at c=1 and c=16 (non-streamed), streams at c=1. */
const PROXY_MAX_CONCURRENCY = 16

const CREDIT_USD = "100000"
/** Local server processes whose CPU is the storage's share of a gateway call (0 when storage is embedded). */
const STORAGE_COMMANDS = ["postgres", "redis-server"]
/** PostgreSQL's statistics collector publishes a backend's counters about once a second (PGSTAT_MIN_INTERVAL). */
const STATS_FLUSH_WAIT_MS = 1_200
const CHAT_PATH: Record<Target, string> = {
  direct: "/v1/chat/completions",
  bare: "/v1/chat/completions",
  portkey: "/v1/chat/completions",
  gateway: "/api/v1/chat/completions",
  responses: "/api/v1/responses",
  tenants: "/api/v1/chat/completions",
  "proxy-off": "/v1/chat/completions",
  "proxy-builtin": "/v1/chat/completions"
}
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`)
const load1 = () => loadavg()[0]

/** --cpu-prof into its own directory under the run's profile directory, when that process is being profiled. */
const profileFlags = (name: string, on: boolean): string[] =>
  profileDir === undefined || !on ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, name)}`]

interface Servers {
  readonly fake: ServerProcess
  readonly bare: ServerProcess
  readonly gateway: ServerProcess
  readonly urls: Record<"direct" | "bare" | "gateway", string>
}

const startServers = async (storage: BenchStorage): Promise<Servers> => {
  const fake = await startBenchFakeProvider()
  const bare = startNodeProcess("bare-proxy", join(root, "bench", "bare-proxy.ts"), benchChildEnv({ BARE_UPSTREAM_URL: fake.url, PORT: "0" }))
  const bareUrl = await waitForUrlLine(bare, 15_000)
  const gateway = await startBenchGateway({ storage, providerUrl: fake.url, nodeFlags: profileFlags("gateway", read.profile === "gateway") })
  return { fake: fake.process, bare, gateway: gateway.process, urls: { direct: fake.url, bare: bareUrl, gateway: gateway.url } }
}

/** Hands out each pre-signed request once; signs inline (counted) if the pool runs dry. */
const oneShotSupplier = (pool: AttestedRequest[], stream: boolean, authorization: (i: number) => string, route: BenchRoute = "chat.completions") => {
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
      return freshRequest(stream, authorization(i++), route)
    },
    inline: () => inline
  }
}

/** Cycles a small pool: the fake provider and the bare proxy do not check attestations, so re-use costs nothing. */
const cyclingSupplier = (pool: ReadonlyArray<AttestedRequest>) => {
  let i = 0
  return () => pool[i++ % pool.length]
}

/** One measured scenario: a mode, a concurrency, and the targets measured in it (in turn, the order rotating). */
interface Scenario {
  readonly stream: boolean
  readonly concurrency: number
  readonly targets: ReadonlyArray<Target>
}

const scenarios = (): Scenario[] => {
  const out: Scenario[] = []
  for (const stream of [false, true]) {
    for (const concurrency of settings.concurrency) {
      // Quick mode: streams at c=1 only, where (c) is measured.
      if (quick && stream && concurrency !== 1) continue
      const targets: Target[] = ["direct", "bare", "gateway"]
      // Issue 34: the Responses route beside the chat route, same key and turn, in the same rounds.
      if (concurrency === 1) targets.push("responses")
      if (!stream && concurrency === TENANT_CONCURRENCY) targets.push("tenants")
      if (settings.proxy && concurrency <= PROXY_MAX_CONCURRENCY && (!stream || concurrency === 1)) targets.push(...PROXY_TARGETS)
      // A peer is measured where the user path is, so every ratio between them is taken in the same round. Portkey
      // 1.15.2 answers every streamed call through its custom-host route 500 (a TypeError "immutable" appending a
      // header to the upstream's Response, on Node 20 and 24 alike), so it is measured non-streamed only.
      if (settings.peers.includes("portkey") && concurrency <= PROXY_MAX_CONCURRENCY && !stream) targets.push("portkey")
      out.push({ stream, concurrency, targets })
    }
  }
  return out
}

/** Set while the run's database/prefix exists, so an interrupt still drops it. */
let activeStorage: BenchStorage | undefined
const proxyCleanups: Array<() => void> = []
let portkey: PortkeyTarget | undefined

const main = async () => {
  const startedAt = new Date()
  const t0 = performance.now()
  const loadBefore = loadavg()
  // Measured before any server starts, so nothing of the run competes with them.
  const signMicros = ecdsaP256SignMicros()
  const responsesDetokenise = await measureResponsesStreamDetokenise()
  log(`streamed Responses detokenisation: ${(responsesDetokenise.perEventMs * 1000).toFixed(1)} µs per event (${responsesDetokenise.events} events a stream)`)
  const storage = await createBenchStorage(storageEnv(read))
  activeStorage = storage
  const commitMs = storage.databaseUrl === undefined ? undefined : await postgresCommitMs(storage.databaseUrl)
  log(`machine reference: ECDSA P-256 sign ${signMicros.toFixed(1)} µs${commitMs === undefined ? "" : `, PostgreSQL commit ${commitMs.toFixed(3)} ms`}, load ${loadBefore.map((x) => x.toFixed(2)).join("/")}`)
  const storageLabel = `${storage.sql === "postgres" ? `PostgreSQL (${redactUrl(storage.databaseUrl!)})` : "embedded PGlite"} + ${storage.shared === "redis" ? `Redis (prefix ${storage.env.REDIS_PREFIX})` : "in-process shared state"}`
  log(`storage: ${storageLabel}${quick ? " (quick mode)" : ""}; load ${load1().toFixed(2)}`)
  let servers: Servers | undefined
  try {
    servers = await startServers(storage)
    const urls: Partial<Record<Target, string>> = { ...servers.urls, tenants: servers.urls.gateway, responses: servers.urls.gateway }
    log(`direct ${urls.direct}, bare ${urls.bare}, gateway ${urls.gateway} (started in ${((performance.now() - t0) / 1000).toFixed(1)} s)`)

    const funded = await issueSelfServiceKey(urls.gateway!, "bench funded", "198.18.255.1")
    const unfunded = await issueSelfServiceKey(urls.gateway!, "bench unfunded", "198.18.255.2")
    const issuingStarted = performance.now()
    const tenants: Array<{ readonly apiKey: string; readonly keyPrefix: string }> = []
    // Eight at a time: issuance is a few statements each, and 200 in a row would take most of a quick run.
    for (let i = 0; i < TENANT_COUNT; i += 8) {
      tenants.push(...await Promise.all(Array.from({ length: Math.min(8, TENANT_COUNT - i) }, (_, j) =>
        issueSelfServiceKey(urls.gateway!, `bench tenant ${i + j}`, `198.18.${Math.floor((i + j) / 250)}.${((i + j) % 250) + 1}`))))
    }
    const credit = await creditWallet({
      gatewayUrl: urls.gateway!,
      dataDir: storage.dataDir,
      databaseUrl: storage.databaseUrl,
      keyPrefix: [funded.keyPrefix, ...tenants.map((t) => t.keyPrefix)],
      usd: CREDIT_USD
    })
    log(`funded ${funded.keyPrefix} and ${TENANT_COUNT} tenants with $${CREDIT_USD} each via ${credit.via} (${((performance.now() - issuingStarted) / 1000).toFixed(1)} s)`)
    const auth = `Bearer ${funded.apiKey}`
    const tenantAuth = (i: number) => `Bearer ${tenants[i % tenants.length].apiKey}`

    const proxies: Partial<Record<Target, ProxyTarget>> = {}
    if (settings.proxy) {
      for (const target of PROXY_TARGETS) {
        const names = target === "proxy-off" ? "off" : "builtin"
        const proxy = await startProxyTarget({
          root,
          names,
          gatewayUrl: urls.gateway!,
          apiKey: funded.apiKey,
          env: benchChildEnv({}),
          nodeFlags: profileFlags(target, read.profile === "proxy")
        })
        proxyCleanups.push(proxy.cleanup)
        proxies[target] = proxy
        urls[target] = proxy.url
      }
      log(`proxy (names off) ${urls["proxy-off"]}, proxy (builtin names) ${urls["proxy-builtin"]}`)
    }
    if (settings.peers.includes("portkey")) {
      portkey = await startPortkeyTarget({ upstreamUrl: urls.direct!, env: benchChildEnv({}), version: read.portkeyVersion, log })
      proxyCleanups.push(portkey.cleanup)
      urls.portkey = portkey.url
      log(`portkey ${portkey.version} ${urls.portkey}`)
    }

    // One call of each kind to each target before measuring: a broken set-up fails here, loudly.
    for (const stream of [false, true]) {
      for (const target of Object.keys(urls) as Target[]) {
        if (stream && target === "portkey") continue // not measured streamed (see scenarios())
        const proxied = PROXY_TARGETS.includes(target)
        const req = proxied
          ? { headers: PROXY_HEADERS, body: proxyBody(0, stream) }
          : target === "portkey"
          ? { headers: portkey!.headers, body: proxyBody(0, stream) }
          : await freshRequest(stream, target === "tenants" ? tenantAuth(0) : auth, target === "responses" ? "responses" : "chat.completions")
        const res = await fetch(urls[target]! + CHAT_PATH[target], { method: "POST", headers: req.headers, body: new Uint8Array(req.body) })
        const text = await res.text()
        if (res.status !== 200) throw new Error(`sanity call to ${target} (stream ${stream}) answered ${res.status}: ${text.slice(0, 300)}`)
        // The proxy restores what it tokenised: the fake provider's echo of the prompt comes back in the clear.
        if (proxied && !stream && !text.includes("Say hello.")) throw new Error(`sanity call to ${target} (stream ${stream}) did not echo the prompt: ${text.slice(0, 300)}`)
      }
    }

    const pidOf: Partial<Record<Target, number>> = {
      direct: servers.fake.pid,
      bare: servers.bare.pid,
      gateway: servers.gateway.pid,
      responses: servers.gateway.pid,
      tenants: servers.gateway.pid,
      ...Object.fromEntries(Object.entries(proxies).map(([t, p]) => [t, p.process.pid])),
      ...(portkey === undefined ? {} : { portkey: portkey.process.pid })
    }
    const sampler = new RssSampler([...new Set(Object.values(pidOf))])
    sampler.start()
    const phaseMs = (settings.warmupSeconds + settings.seconds) * 1000
    if (phaseMs > ATTESTATION_USE_LIMIT_MS) throw new Error("a phase must fit in the 250 s an attestation pool is used for")

    const phases: PhaseRecord[] = []
    const stages: StageRecord[] = []
    const lastRps = new Map<string, number>()
    const cyclePools = {
      false: await attestedPool(64, false, auth),
      true: await attestedPool(64, true, auth)
    }
    const proxyPools = {
      false: Array.from({ length: 64 }, (_, i) => ({ headers: PROXY_HEADERS, body: proxyBody(i, false) })),
      true: Array.from({ length: 64 }, (_, i) => ({ headers: PROXY_HEADERS, body: proxyBody(i, true) }))
    }
    const portkeyPools = portkey === undefined ? undefined : {
      false: Array.from({ length: 64 }, (_, i) => ({ headers: portkey!.headers, body: proxyBody(i, false) })),
      true: Array.from({ length: 64 }, (_, i) => ({ headers: portkey!.headers, body: proxyBody(i, true) }))
    }

    const base = (origin: string, path: string, concurrency: number, seconds: number): Omit<PhaseSpec, "next"> => ({
      origin,
      path,
      concurrency,
      warmupMs: settings.warmupSeconds * 1000,
      measureMs: seconds * 1000,
      requestTimeoutMs: 30_000
    })

    const plan = scenarios()
    for (let round = 1; round <= settings.rounds; round++) {
      for (const { stream, concurrency, targets } of plan) {
        // Rotating the order each round keeps "who ran first after a pause" from favouring one target.
        const order = targets.map((_, i) => targets[(i + round - 1) % targets.length])
        for (const target of order) {
          const key = `${target}:${stream}:${concurrency}`
          let inline = () => 0
          let next: PhaseSpec["next"]
          if (target === "gateway" || target === "tenants" || target === "responses") {
            // Sized from the last measurement of this scenario, with a floor: a phase that completed nothing
            // (all answers slower than the window) must not leave the next one signing inline.
            const expected = Math.max(lastRps.get(key) ?? (concurrency === 1 ? 1_500 : 4_000), 200) * 1.5
            const size = Math.min(80_000, Math.ceil(expected * (phaseMs / 1000)) + concurrency * 4)
            const authFor = target === "tenants" ? tenantAuth : () => auth
            const route = target === "responses" ? "responses" : "chat.completions"
            const supplier = oneShotSupplier(await attestedPool(size, stream, authFor, route), stream, authFor, route)
            next = supplier.next
            inline = supplier.inline
          } else if (PROXY_TARGETS.includes(target)) {
            next = cyclingSupplier(proxyPools[`${stream}`])
          } else if (target === "portkey") {
            next = cyclingSupplier(portkeyPools![`${stream}`])
          } else {
            next = cyclingSupplier(cyclePools[`${stream}`])
          }
          const throughGateway = target !== "direct" && target !== "bare" && target !== "portkey"
          const proxied = PROXY_TARGETS.includes(target)
          const ownPid = pidOf[target]!
          sampler.reset()
          const countersBefore = throughGateway ? await storage.statementCounters?.() : undefined
          const cpuBefore = cpuMsOf(ownPid)
          const gatewayCpuBefore = cpuMsOf(servers.gateway.pid)
          const storageCpuBefore = cpuMsOfCommands(STORAGE_COMMANDS)
          const runPids = [...new Set(Object.values(pidOf))]
          /** CPU time of the run's own processes so far: the load generator, every server and the storage. */
          const runCpuMs = (storageCpu: number) => ownCpuMs() + runPids.reduce((n, pid) => n + cpuMsOf(pid), 0) + storageCpu
          const ownBefore = runCpuMs(storageCpuBefore)
          const busyBefore = machineBusyMs()
          const wallStart = performance.now()
          const result = await runPhase({ ...base(urls[target]!, CHAT_PATH[target], concurrency, settings.seconds), next })
          sampler.sample()
          const cpuAfter = cpuMsOf(ownPid)
          const gatewayCpuAfter = cpuMsOf(servers.gateway.pid)
          const storageCpuAfter = cpuMsOfCommands(STORAGE_COMMANDS)
          const foreignCpuCores = foreignCores(
            machineBusyMs() - busyBefore,
            runCpuMs(storageCpuAfter) - ownBefore,
            performance.now() - wallStart
          )
          const loadAvg1 = load1()
          let postgres: PhaseRecord["postgres"]
          if (countersBefore !== undefined && storage.statementCounters !== undefined) {
            // PostgreSQL publishes a backend's statistics about once a second; wait so the phase's last second counts.
            await new Promise((r) => setTimeout(r, STATS_FLUSH_WAIT_MS))
            const after = await storage.statementCounters()
            postgres = {
              settleMsPerRequest: (after.settleMs - countersBefore.settleMs) / result.answered,
              settleCallsPerRequest: (after.settleCalls - countersBefore.settleCalls) / result.answered,
              commitsPerRequest: (after.commits - countersBefore.commits) / result.answered
            }
          }
          lastRps.set(key, result.rps)
          const answered = Math.max(1, result.answered)
          const record: PhaseRecord = {
            round, stream, concurrency, target, result, peakRssKiB: sampler.peakKiB(ownPid), inlineSigned: inline(),
            cpuMsPerRequest: (cpuAfter - cpuBefore) / answered,
            ...(proxied ? { gatewayCpuMsPerRequest: (gatewayCpuAfter - gatewayCpuBefore) / answered } : {}),
            storageCpuMsPerRequest: (storageCpuAfter - storageCpuBefore) / answered,
            loadAvg1,
            foreignCpuCores,
            postgres
          }
          phases.push(record)
          log(
            `round ${round} ${stream ? "stream" : "json  "} c=${String(concurrency).padStart(2)} ${target.padEnd(13)} ` +
              `${result.rps.toFixed(0).padStart(6)} req/s p50 ${result.latencyP50Ms.toFixed(2)} ms p99 ${result.latencyP99Ms.toFixed(2)} ms` +
              (stream ? ` ttfb p50 ${result.ttfbP50Ms.toFixed(2)} ms` : "") +
              ` cpu ${record.cpuMsPerRequest.toFixed(2)} ms/req` +
              (proxied ? ` (+ gateway ${record.gatewayCpuMsPerRequest!.toFixed(2)})` : "") +
              (throughGateway ? ` storage cpu ${record.storageCpuMsPerRequest.toFixed(2)} ms/req` : "") +
              (postgres === undefined ? "" : ` relay_settle ${postgres.settleMsPerRequest.toFixed(2)} ms/req in ${postgres.settleCallsPerRequest.toFixed(2)} calls/req, ${postgres.commitsPerRequest.toFixed(1)} commits/req`) +
              ` load ${loadAvg1.toFixed(2)} foreign cpu ${foreignCpuCores.toFixed(2)} cores` +
              (result.errors > 0 ? ` errors ${result.errors} (${result.firstError})` : "") +
              (inline() > 0 ? ` (${inline()} signed inline)` : "")
          )
        }
      }
      if (settings.stageSeconds > 0) {
        for (const { name } of STAGES) {
          stages.push({ round, stage: name, result: await runStage(name, urls.gateway!, funded.apiKey, unfunded.apiKey, base(urls.gateway!, CHAT_PATH.gateway, 1, settings.stageSeconds), lastRps.get("gateway:false:1")) })
          const r = stages[stages.length - 1].result
          log(`round ${round} stage ${name.padEnd(15)} p50 ${r.latencyP50Ms.toFixed(2)} ms p99 ${r.latencyP99Ms.toFixed(2)} ms load ${load1().toFixed(2)}${r.errors > 0 ? ` unexpected ${r.errors} (${r.firstError})` : ""}`)
        }
      }
    }
    sampler.stop()

    const processPeakRssMiB: Record<string, number> = {
      "fake provider": memoryOf(servers.fake.pid).hwmKiB / 1024,
      "bare proxy": memoryOf(servers.bare.pid).hwmKiB / 1024,
      gateway: memoryOf(servers.gateway.pid).hwmKiB / 1024,
      ...Object.fromEntries(Object.entries(proxies).map(([t, p]) => [t, memoryOf(p.process.pid).hwmKiB / 1024])),
      ...(portkey === undefined ? {} : { [`portkey ${portkey.version}`]: memoryOf(portkey.process.pid).hwmKiB / 1024 })
    }
    const summary = summarise(phases)
    const checks = verdicts(phases, storage.sql, processPeakRssMiB.gateway, responsesDetokenise.perEventMs)
    const ctx = context(phases)
    const directP50 = summary.find((r) => r.target === "direct" && !r.stream && r.concurrency === 1)?.p50 ?? Number.NaN
    const stageTable = stageRows(stages, directP50)
    const notes = [
      `Rate limits raised for the run (RATE_LIMITS_JSON=${BENCH_RATE_LIMITS_JSON}) so the windows are checked on every call but never throttle it.`,
      "LOG_LEVEL=warn, TRACE_SAMPLE_RATIO=0 for the gateway. Load generator, servers and database share this machine's CPUs.",
      `Every direct gateway request carries its own v3 attestation (unique body, pre-signed right before its phase); ${phases.reduce((n, p) => n + p.inlineSigned, 0)} requests had to be signed inline.`,
      read.idempotency
        ? "Every direct gateway request carries its own Idempotency-Key (fresh each time): admission, stored response and slot release are in every call."
        : "BENCH_IDEMPOTENCY=0: gateway requests carry no Idempotency-Key.",
      `(e): ${TENANT_COUNT} self-service tenants, each funded with $${CREDIT_USD}, called round-robin at c=${TENANT_CONCURRENCY} (\`tenants\`); the hot tenant is the single funded key at the same concurrency (\`gateway\`, c=${TENANT_CONCURRENCY}).`,
      settings.proxy
        ? "(g)/(h): the local proxy (programs/proxy.ts, started as docs/proxy.md says) in front of the gateway, names off and built-in names; the load generator sends plain OpenAI chat completions (\"Say hello.\") and the proxy tokenises, attests and relays each one with its own key. The proxy does not forward Idempotency-Key (docs/proxy.md), so these gateway calls carry none."
        : "BENCH_PROXY=0: no proxy targets.",
      ...(portkey === undefined ? [] : [
        `Peer: Portkey's gateway ${portkey.version} (npm ${"@portkey-ai/gateway"}, installed into a temporary folder, started headless on 127.0.0.1 with its defaults), relaying the same plain chat calls as the proxy targets to the same fake provider through its custom-host route (x-portkey-provider: openai). Non-streamed only: its streamed calls answer 500 on this route.`
      ]),
      `(i): \`responses\` is the gateway's POST /api/v1/responses with the same key and the same turn as \`gateway\`'s chat completion (instructions + one user message, every request attested and idempotent alike), measured at c=1 in the same rounds. (j): the SDK's and the proxy's SSE detokeniser over a ${responsesDetokenise.events}-event Responses stream (4-character output_text deltas, aliases cut across events, response.completed with the whole output), in this process before the servers start; median of 200 runs of the whole stream divided by its events.`,
      "Latency = request sent to last body byte; TTFB = request sent to first body byte (first SSE frame for streams).",
      `Machine load average (1/5/15 min) at start ${loadBefore.map((x) => x.toFixed(2)).join("/")}, at end ${loadavg().map((x) => x.toFixed(2)).join("/")} (includes anything else running here).`
    ]
    const warnings = disturbanceWarnings(phases)
    for (const w of warnings) log(`WARNING ${w}`)
    const machine: MachineReference = {
      cores: availableParallelism(),
      ecdsaP256SignMicros: signMicros,
      ...(commitMs === undefined ? {} : { postgresCommitMs: commitMs }),
      loadBefore,
      loadDuring: median(phases.map((p) => p.loadAvg1 ?? Number.NaN))
    }
    const meta: RunMeta = {
      startedAt: startedAt.toISOString(),
      durationS: (performance.now() - t0) / 1000,
      storage: storageLabel,
      node: process.version,
      cpus: `${availableParallelism()} × ${cpus()[0]?.model ?? "cpu"}`,
      commit: gitCommit(root),
      settings: { ...settings, creditUsd: CREDIT_USD, tenants: TENANT_COUNT },
      notes,
      processPeakRssMiB,
      machine,
      warnings
    }
    let md = markdown({ meta, summary, verdicts: checks, context: ctx, stages: stageTable })
    if (profileDir !== undefined) {
      // Profiles are written when a process exits, so stop the profiled ones first (SIGTERM: a graceful exit).
      const profiled = read.profile === "gateway" ? [["gateway", servers.gateway] as const] : Object.entries(proxies).map(([t, p]) => [t, p.process] as const)
      for (const [name, proc] of profiled) {
        await proc.stop()
        const dir = join(profileDir, name)
        const files = profileFiles(dir)
        if (files.length === 0) md += `\n(no CPU profile was written for ${name})\n`
        for (const file of files) {
          const profile = summariseProfile(dir, root, 20, file)
          // The first file of a process is its main thread (tid 0 sorts first), the others its worker threads.
          if (profile !== undefined) md += profileMarkdown(profile, `${name} CPU profile, ${file.includes(".0.") ? "main thread" : "thread"} ${file}`)
        }
      }
    }
    process.stdout.write("\n" + md)

    mkdirSync(resultsDir, { recursive: true })
    const stamp = startedAt.toISOString().replaceAll(":", "-").replace(/\.\d+Z$/, "Z")
    const jsonPath = join(resultsDir, `${stamp}-${storage.sql}-${storage.shared}${quick ? "-quick" : ""}.json`)
    writeFileSync(jsonPath, JSON.stringify({ meta, verdicts: checks, context: ctx, summary, stages: stageTable, phases, stageRuns: stages }, null, 2) + "\n")
    writeFileSync(join(resultsDir, "latest.md"), md)
    writeFileSync(join(resultsDir, `latest-${storage.sql}-${storage.shared}${quick ? "-quick" : ""}.md`), md)
    log(`wrote ${jsonPath} and bench/results/latest.md`)
  } finally {
    await stopAll()
    for (const cleanup of proxyCleanups) cleanup()
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
      const supplier = oneShotSupplier(await attestedPool(poolSize, false, `Bearer ${unfundedKey}`), false, () => `Bearer ${unfundedKey}`)
      return runPhase({ ...spec, expectStatus: 402, next: supplier.next })
    }
    case "200 full relay": {
      const supplier = oneShotSupplier(await attestedPool(poolSize, false, `Bearer ${apiKey}`), false, () => `Bearer ${apiKey}`)
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
