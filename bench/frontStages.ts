/**
 * `node bench/frontStages.ts`: the gateway's CPU per call and its Server-Timing per stage for several kinds of call,
 * measured in alternating blocks at c=1 (or FRONT_CONCURRENCY) over keep-alive connections, so a shared machine's
 * drifting load falls on every kind alike. The kinds stop one step further into the pipeline each, like
 * `npm run bench`'s stage probes: `healthz`, `401` (well-formed unknown key), `403` (valid key, no X-Service-Engine:
 * the refusal carries a signed failed-call receipt), `200-json`, `200-stream` (attested, an Idempotency-Key each),
 * `200-json-noidem` (the same without the key: what idempotency costs).
 *
 * With FRONT_BASE_ROOT (another checkout, e.g. `git archive main | tar -x -C /tmp/base` with node_modules linked) a
 * second gateway from that checkout runs beside this one, on its own storage, and every block alternates between the
 * two: a change's before and after in the same minutes, and per kind the median over blocks of the difference of the
 * first-byte p50s of each pair of blocks run next to each other. Printed per gateway and kind: p50, first-byte p50
 * (a stream's first SSE frame), CPU per call (all threads,
 * then user time, then the main thread's user time, the steadiest figure on a loaded machine: it leaves out the
 * kernel's loopback work and the GC helper threads) and each Server-Timing stage's mean.
 *
 * Settings: FRONT_KINDS ("healthz,401,403,200-json"), FRONT_CALLS (2000 per kind and gateway), FRONT_BLOCK (100),
 * FRONT_CONCURRENCY (1), FRONT_BASE_ROOT, FRONT_HOLD ("<kind>:<seconds>": afterwards, send that kind for that long,
 * e.g. while `perf record -g -p <printed pid>` runs), FRONT_PAUSE (seconds to keep the servers up idle),
 * FRONT_NODE_OPTIONS (the gateway's NODE_OPTIONS, e.g. --perf-basic-prof), FRONT_NODE_FLAGS (Node flags on the gateway's
 * command line, for the V8 flags NODE_OPTIONS refuses, e.g. `--trace-gc`; FRONT_NEW_NODE_FLAGS: for this checkout's gateway
 * only, e.g. a heap setting tried against the base), FRONT_GATEWAY_LOG (a path: each gateway's output
 * from then on is copied to `<path>.<label>`), DATABASE_URL / REDIS_URL as for
 * `npm run bench`.
 */
import { createWriteStream, readFileSync } from "node:fs"
import { loadavg } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import { parseServerTiming } from "../src/http/serverTiming.ts"
import { type AttestedRequest, attestedPool, benchBody } from "./lib/attested.ts"
import { fundedBenchKey, startBenchFakeProvider, startBenchGateway } from "./lib/benchGateway.ts"
import { cpuMsOf, killAllSync, stopAll } from "./lib/processes.ts"
import { percentile, sortedCopy } from "./lib/stats.ts"
import { createBenchStorage } from "./lib/storage.ts"
import { readBenchSettings, storageEnv } from "./lib/benchSettings.ts"
import { FRONT_KINDS, FRONT_SETTINGS } from "./settings/frontStages.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const log = (msg: string) => process.stderr.write(`[front] ${msg}\n`)

const KINDS = FRONT_KINDS
type Kind = (typeof KINDS)[number]
const EXPECT: Record<Kind, number> = { healthz: 200, "401": 401, "403": 403, "200-json": 200, "200-stream": 200, "200-json-noidem": 200 }

/** Every setting, read before anything starts (bench/settings/frontStages.ts). */
const settings = readBenchSettings("bench/frontStages.ts", FRONT_SETTINGS)
const { kinds, calls, block, hold } = settings
/** Requests in flight at once within a block (one keep-alive connection each). */
const concurrency = settings.concurrency

interface Sample {
  readonly ms: number
  /** request sent to the first body chunk (a stream's first SSE frame) */
  readonly firstByteMs: number
  readonly stages: ReadonlyArray<{ readonly name: string; readonly ms: number }>
}

const send = async (pool: Pool, kind: Kind, req: AttestedRequest): Promise<Sample> => {
  const start = performance.now()
  const res = await pool.request(kind === "healthz"
    ? { path: "/healthz", method: "GET" }
    : { path: "/api/v1/chat/completions", method: "POST", headers: req.headers, body: req.body })
  let text = ""
  let firstByteMs = Number.NaN
  for await (const chunk of res.body) {
    if (Number.isNaN(firstByteMs)) firstByteMs = performance.now() - start
    text += String(chunk)
  }
  const ms = performance.now() - start
  if (res.statusCode !== EXPECT[kind]) throw new Error(`${kind} answered ${res.statusCode}: ${text.slice(0, 300)}`)
  const st = res.headers["server-timing"]
  return { ms, firstByteMs: Number.isNaN(firstByteMs) ? ms : firstByteMs, stages: parseServerTiming(typeof st === "string" ? st : undefined) }
}

interface Target {
  readonly label: string
  readonly pid: number
  readonly url: string
  readonly fixed: Partial<Record<Kind, AttestedRequest>>
  readonly auth: string
}

/** User and system CPU time of a process so far, ms (Linux /proc; clock ticks of 10 ms). */
const cpuSplitOf = (pid: number, mainThreadOnly = false): { user: number; system: number } => {
  const stat = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }
}

/** A gateway started from the checkout at `checkout`, on storage of its own, with a funded key. */
const startTarget = async (label: string, checkout: string, fakeUrl: string, cleanups: Array<() => Promise<void>>, n: number): Promise<Target> => {
  const storage = await createBenchStorage(storageEnv(settings))
  cleanups.push(() => storage.drop())
  const { process: gateway, url } = await startBenchGateway({
    storage,
    providerUrl: fakeUrl,
    checkout,
    name: `gateway-${label}`,
    env: settings.nodeOptions ? { NODE_OPTIONS: settings.nodeOptions } : {},
    // V8 flags Node refuses in NODE_OPTIONS (--log-deopt, --trace-gc, ...) go on the command line.
    nodeFlags: [settings.nodeFlags, label === "new" ? settings.newNodeFlags : undefined]
      .flatMap((flags) => flags?.split(" ").filter((f) => f !== "") ?? [])
  })
  // FRONT_GATEWAY_LOG: the gateway's own output (e.g. what --trace-gc prints) copied into `<path>.<label>`.
  if (settings.gatewayLog) {
    const file = createWriteStream(`${settings.gatewayLog}.${label}`)
    gateway.child.stdout!.on("data", (chunk: Buffer) => file.write(chunk))
    gateway.child.stderr!.on("data", (chunk: Buffer) => file.write(chunk))
  }
  const funded = await fundedBenchKey(url, storage, "front bench", `198.18.254.${n}`, "100000")
  const auth = `Bearer ${funded.apiKey}`
  const bad = funded.apiKey.slice(0, -1) + (funded.apiKey.endsWith("a") ? "b" : "a")
  const plain = { "content-type": "application/json" }
  log(`${label}: gateway pid ${gateway.pid} from ${checkout}, storage ${storage.sql}+${storage.shared}`)
  return {
    label,
    pid: gateway.pid,
    url,
    auth,
    fixed: {
      healthz: { body: Buffer.alloc(0), headers: {} },
      "401": { body: benchBody(0, false), headers: { ...plain, authorization: `Bearer ${bad}` } },
      "403": { body: benchBody(0, false), headers: { ...plain, authorization: auth } }
    }
  }
}

const main = async () => {
  const cleanups: Array<() => Promise<void>> = []
  try {
    const { url: fakeUrl } = await startBenchFakeProvider()
    const targets = [await startTarget("new", root, fakeUrl, cleanups, 2)]
    // FRONT_BASE_ROOT: a second checkout (the code before a change) measured in the same run, block by block.
    if (settings.baseRoot) targets.unshift(await startTarget("base", settings.baseRoot, fakeUrl, cleanups, 3))
    log(`${calls} calls of ${kinds.join(", ")} on ${targets.map((t) => t.label).join(" and ")}, load ${loadavg().map((x) => x.toFixed(2)).join("/")}`)

    // Attested requests are signed in slices (an attestation lives 300 s).
    const requestsOf = async (t: Target, k: Kind, n: number): Promise<AttestedRequest[]> =>
      t.fixed[k] !== undefined
        ? Array.from({ length: n }, () => t.fixed[k]!)
        : k === "200-json-noidem"
        ? (await attestedPool(n, false, t.auth)).map((r) => {
          const { "idempotency-key": _, ...headers } = r.headers
          return { body: r.body, headers }
        })
        : attestedPool(n, k === "200-stream", t.auth)

    const cells = targets.flatMap((t) => kinds.map((k) => ({ t, k, pool: new Pool(t.url, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 }), samples: [] as Sample[], blockFirstByte: [] as number[], cpu: 0, user: 0, mainUser: 0 })))
    const warm = Math.min(200, Math.floor(calls / 5))
    const slice = 1000
    for (let done = 0; done < calls; done += slice) {
      const n = Math.min(slice, calls - done)
      const reqs = await Promise.all(cells.map((c) => requestsOf(c.t, c.k, n)))
      for (let b = 0; b * block < n; b++) {
        const m = Math.min(block, n - b * block)
        const order = b % 2 === 0 ? cells.map((_, i) => i) : cells.map((_, i) => cells.length - 1 - i)
        for (const i of order) {
          const c = cells[i]
          const before = cpuMsOf(c.t.pid)
          const userBefore = cpuSplitOf(c.t.pid).user
          const mainBefore = cpuSplitOf(c.t.pid, true).user
          let next = 0
          const firstBytes: number[] = []
          await Promise.all(Array.from({ length: concurrency }, async () => {
            while (next < m) {
              const j = next++
              const s = await send(c.pool, c.k, reqs[i][b * block + j])
              if (done + b * block + j >= warm) {
                c.samples.push(s)
                firstBytes.push(s.firstByteMs)
              }
            }
          }))
          if (firstBytes.length > 0) c.blockFirstByte.push(percentile(sortedCopy(firstBytes), 50))
          if (done + b * block >= warm) {
            c.cpu += cpuMsOf(c.t.pid) - before
            c.user += cpuSplitOf(c.t.pid).user - userBefore
            c.mainUser += cpuSplitOf(c.t.pid, true).user - mainBefore
          }
        }
      }
    }
    const lines = [`load average at end ${loadavg().map((x) => x.toFixed(2)).join("/")}`]
    for (const c of cells) {
      const xs = c.samples
      const stageMeans = new Map<string, number>()
      for (const s of xs) for (const st of s.stages) stageMeans.set(st.name, (stageMeans.get(st.name) ?? 0) + st.ms / xs.length)
      lines.push(`${c.t.label.padEnd(5)} ${c.k.padEnd(10)} p50 ${percentile(sortedCopy(xs.map((s) => s.ms)), 50).toFixed(3)} ms, first byte p50 ${percentile(sortedCopy(xs.map((s) => s.firstByteMs)), 50).toFixed(3)} ms | gateway cpu ${(c.cpu / xs.length).toFixed(3)} ms/call (user ${(c.user / xs.length).toFixed(3)}, main thread user ${(c.mainUser / xs.length).toFixed(3)}) | ${[...stageMeans].map(([name, ms]) => `${name} ${ms.toFixed(3)}`).join(", ")}`)
    }
    // With a base checkout: each block's first-byte p50 against the base's block of the same kind run next to it,
    // the median of those differences (steadier on a loaded machine than the difference of the two overall p50s).
    if (targets.length === 2) {
      for (const k of kinds) {
        const [base, now] = targets.map((t) => cells.find((c) => c.t === t && c.k === k)!)
        const diffs = now.blockFirstByte.map((v, i) => v - base.blockFirstByte[i]).filter((d) => !Number.isNaN(d))
        lines.push(`${k.padEnd(10)} first byte, new − base, median of ${diffs.length} paired blocks: ${percentile(sortedCopy(diffs), 50).toFixed(3)} ms`)
      }
    }
    process.stdout.write(lines.join("\n") + "\n")
    await Promise.all(cells.map((c) => c.pool.close()))
    if (settings.pause > 0) {
      log(`pausing ${settings.pause} s`)
      await new Promise((r) => setTimeout(r, settings.pause * 1000))
    }
    if (hold !== undefined) {
      const t = targets[targets.length - 1]
      log(`holding ${hold.kind} for ${hold.seconds} s on gateway pid ${t.pid}`)
      const until = Date.now() + hold.seconds * 1000
      const pool = new Pool(t.url, { connections: concurrency, pipelining: 1 })
      let count = 0
      const before = cpuMsOf(t.pid)
      while (Date.now() < until) {
        const reqs = await requestsOf(t, hold.kind, 500 * concurrency)
        let next = 0
        await Promise.all(Array.from({ length: concurrency }, async () => {
          while (next < reqs.length) {
            await send(pool, hold.kind, reqs[next++])
            count++
          }
        }))
      }
      log(`held: ${count} calls, gateway cpu ${((cpuMsOf(t.pid) - before) / count).toFixed(3)} ms/call`)
      await pool.close()
    }
  } finally {
    await stopAll()
    for (const c of cleanups) await c()
  }
}

process.on("exit", killAllSync)
main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`[front] failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  stopAll().finally(() => process.exit(1))
})
