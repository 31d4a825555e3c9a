/**
 * `npm run bench:paired`: two gateway request kinds measured request by request in alternation (A B A B ...) over
 * one keep-alive connection each, at c=1, so a shared machine's drifting load falls on both alike. Used to find
 * what the streamed Responses route costs beyond streamed chat (issue 34's "within 0.2 ms of the chat route") and
 * what a change to the gateway's per-call path gains, where `npm run bench`'s phase-after-phase p50s differ by more
 * than the effect between one phase and the next.
 *
 * Prints, for each kind: p50 latency and TTFB, the fake provider's own p50 for the same kind (measured the same way,
 * so the provider's larger Responses stream is not counted as the gateway's), the gateway's CPU per call (blocks of
 * BENCH_PAIRED_BLOCK calls of one kind, then the other), and the median of the per-pair differences.
 *
 * Settings: BENCH_PAIRED_KINDS ("chat-stream,responses-stream"; also chat-json, responses-json), BENCH_PAIRED_CALLS
 * (1500 per kind), BENCH_PAIRED_BLOCK (50), BENCH_PROFILE=1 (gateway under --cpu-prof, the summary printed),
 * DATABASE_URL / REDIS_URL as for `npm run bench`.
 */
import { loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import { attestedPool, type AttestedRequest, benchBody, type BenchRoute } from "./lib/attested.ts"
import { fundedBenchKey, startBenchFakeProvider, startBenchGateway } from "./lib/benchGateway.ts"
import { cpuMsOf, killAllSync, stopAll } from "./lib/processes.ts"
import { profileFiles, profileMarkdown, summariseProfile } from "./lib/profile.ts"
import { percentile, sortedCopy } from "./lib/stats.ts"
import { createBenchStorage } from "./lib/storage.ts"
import { readBenchSettings, storageEnv } from "./lib/benchSettings.ts"
import { PAIRED_KINDS, PAIRED_SETTINGS } from "./settings/pairedRoutes.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const log = (msg: string) => process.stderr.write(`[paired] ${msg}\n`)

type Kind = (typeof PAIRED_KINDS)[number]
const KINDS: Record<Kind, { readonly route: BenchRoute; readonly stream: boolean; readonly gatewayPath: string; readonly providerPath: string }> = {
  "chat-stream": { route: "chat.completions", stream: true, gatewayPath: "/api/v1/chat/completions", providerPath: "/v1/chat/completions" },
  "responses-stream": { route: "responses", stream: true, gatewayPath: "/api/v1/responses", providerPath: "/v1/responses" },
  "chat-json": { route: "chat.completions", stream: false, gatewayPath: "/api/v1/chat/completions", providerPath: "/v1/chat/completions" },
  "responses-json": { route: "responses", stream: false, gatewayPath: "/api/v1/responses", providerPath: "/v1/responses" }
}

const settings = readBenchSettings("bench/pairedRoutes.ts", PAIRED_SETTINGS)
const kinds: ReadonlyArray<Kind> = settings.kinds
const { calls, block } = settings
const profileDir = settings.profile ? join(tmpdir(), `relay-paired-profile-${Date.now()}`) : undefined

interface Timed {
  readonly totalMs: number
  readonly ttfbMs: number
}

/** One request to the end of its body. */
const send = async (pool: Pool, path: string, req: { readonly body: Buffer; readonly headers: Record<string, string> }): Promise<Timed> => {
  const start = performance.now()
  const res = await pool.request({ path, method: "POST", headers: req.headers, body: req.body })
  let first = Number.NaN
  let text = ""
  for await (const chunk of res.body) {
    if (Number.isNaN(first)) first = performance.now()
    if (res.statusCode !== 200) text += String(chunk)
  }
  const end = performance.now()
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 300)}`)
  return { totalMs: end - start, ttfbMs: (Number.isNaN(first) ? end : first) - start }
}

const p50 = (xs: ReadonlyArray<number>) => percentile(sortedCopy(xs), 50)

/**
 * Alternates the two kinds: request by request for latency, and in blocks (all of one kind, then the other) so the
 * gateway's CPU over a block is one kind's. `next(kind, i)` gives the i-th request of a kind.
 */
const alternate = async (
  origin: string,
  pathOf: (k: Kind) => string,
  next: (k: Kind, i: number) => AttestedRequest,
  count: number,
  cpuPid: number | undefined
) => {
  const pools = Object.fromEntries(kinds.map((k) => [k, new Pool(origin, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 })])) as Record<Kind, Pool>
  const timed = Object.fromEntries(kinds.map((k) => [k, [] as Timed[]])) as Record<Kind, Timed[]>
  const cpu = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<Kind, number>
  const warm = Math.min(100, Math.floor(count / 5))
  try {
    // Request by request: A B A B (the pair's order swapping every block, so neither always follows the other).
    for (let b = 0; b * block < count; b++) {
      const n = Math.min(block, count - b * block)
      const order = b % 2 === 0 ? kinds : [...kinds].reverse()
      for (const k of order) {
        const before = cpuPid === undefined ? 0 : cpuMsOf(cpuPid)
        for (let j = 0; j < n; j++) timed[k].push(await send(pools[k], pathOf(k), next(k, b * block + j)))
        if (b * block >= warm) cpu[k] += (cpuPid === undefined ? 0 : cpuMsOf(cpuPid)) - before
      }
    }
  } finally {
    await Promise.all(Object.values(pools).map((p) => p.close()))
  }
  const counted = (k: Kind) => timed[k].slice(warm)
  const [a, b] = kinds
  const pairs = counted(a).map((x, i) => counted(b)[i].totalMs - x.totalMs)
  return {
    p50: Object.fromEntries(kinds.map((k) => [k, p50(counted(k).map((t) => t.totalMs))])) as Record<Kind, number>,
    ttfb: Object.fromEntries(kinds.map((k) => [k, p50(counted(k).map((t) => t.ttfbMs))])) as Record<Kind, number>,
    cpuMsPerCall: Object.fromEntries(kinds.map((k) => [k, cpu[k] / counted(k).length])) as Record<Kind, number>,
    pairedDiffP50: p50(pairs)
  }
}

const main = async () => {
  const storage = await createBenchStorage(storageEnv(settings))
  try {
    const { url: fakeUrl } = await startBenchFakeProvider()
    const { process: gateway, url: gatewayUrl } = await startBenchGateway({
      storage,
      providerUrl: fakeUrl,
      nodeFlags: profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]
    })
    const funded = await fundedBenchKey(gatewayUrl, storage, "paired bench", "198.18.254.1", "100000")
    const auth = `Bearer ${funded.apiKey}`
    log(`storage ${storage.sql}+${storage.shared}, ${calls} calls of each of ${kinds.join(" and ")}, load ${loadavg().map((x) => x.toFixed(2)).join("/")}`)

    // The provider alone, the same way: its own cost of each kind.
    const plain = Object.fromEntries(kinds.map((k) => [k, Array.from({ length: 64 }, (_, i) => ({ body: benchBody(i, KINDS[k].stream, KINDS[k].route), headers: { "content-type": "application/json" } }))])) as unknown as Record<Kind, AttestedRequest[]>
    const direct = await alternate(fakeUrl, (k) => KINDS[k].providerPath, (k, i) => plain[k][i % 64], calls, undefined)

    // Attestations live 300 s: signed in slices of at most 1000 calls, just before each slice is sent.
    const slice = 1000
    const gw = { p50: {} as Record<Kind, number[]>, ttfb: {} as Record<Kind, number[]>, cpu: {} as Record<Kind, number[]>, diff: [] as number[] }
    for (let done = 0; done < calls; done += slice) {
      const n = Math.min(slice, calls - done)
      const pools = Object.fromEntries(await Promise.all(kinds.map(async (k) => [k, await attestedPool(n, KINDS[k].stream, auth, KINDS[k].route)] as const))) as Record<Kind, AttestedRequest[]>
      const r = await alternate(gatewayUrl, (k) => KINDS[k].gatewayPath, (k, i) => pools[k][i], n, gateway.pid)
      for (const k of kinds) {
        ;(gw.p50[k] ??= []).push(r.p50[k])
        ;(gw.ttfb[k] ??= []).push(r.ttfb[k])
        ;(gw.cpu[k] ??= []).push(r.cpuMsPerCall[k])
      }
      gw.diff.push(r.pairedDiffP50)
      log(`slice ${done / slice + 1}: ${kinds.map((k) => `${k} p50 ${r.p50[k].toFixed(3)} ms cpu ${r.cpuMsPerCall[k].toFixed(3)} ms/call`).join(", ")}, paired difference p50 ${r.pairedDiffP50.toFixed(3)} ms, load ${loadavg()[0].toFixed(2)}`)
    }
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0) / xs.length
    const [a, b] = kinds
    const lines = [
      `load average at end ${loadavg().map((x) => x.toFixed(2)).join("/")}`,
      ...kinds.map((k) =>
        `${k.padEnd(17)} provider p50 ${direct.p50[k].toFixed(3)} ms | gateway p50 ${mean(gw.p50[k]).toFixed(3)} ms ttfb ${mean(gw.ttfb[k]).toFixed(3)} ms, added ${(mean(gw.p50[k]) - direct.p50[k]).toFixed(3)} ms | gateway cpu ${mean(gw.cpu[k]).toFixed(3)} ms/call`
      ),
      `${b} − ${a}: provider ${(direct.pairedDiffP50).toFixed(3)} ms, gateway ${mean(gw.diff).toFixed(3)} ms (median of paired differences), added latency difference ${(mean(gw.p50[b]) - direct.p50[b] - (mean(gw.p50[a]) - direct.p50[a])).toFixed(3)} ms, gateway cpu difference ${(mean(gw.cpu[b]) - mean(gw.cpu[a])).toFixed(3)} ms/call`
    ]
    process.stdout.write(lines.join("\n") + "\n")
    if (profileDir !== undefined) {
      await gateway.stop()
      for (const file of profileFiles(profileDir)) {
        const profile = summariseProfile(profileDir, root, 30, file)
        if (profile !== undefined) process.stdout.write(profileMarkdown(profile, `gateway CPU profile ${file}`))
      }
      log(`raw profiles in ${profileDir}`)
    }
  } finally {
    await stopAll()
    await storage.drop()
  }
}

process.on("exit", killAllSync)
main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`[paired] failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  stopAll().finally(() => process.exit(1))
})
