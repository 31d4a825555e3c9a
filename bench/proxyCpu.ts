/**
 * `npm run bench:proxy-cpu`: the local proxy's CPU per call, two builds side by side (issue 41: a shared machine moves
 * latency, not CPU per call, and alternating the two builds in the same minutes cancels most of what is left). Starts
 * the stub gateway (bench/lib/stubGateway.ts) and one proxy per checkout in BENCH_PROXY_ROOTS (comma-separated; default
 * this checkout only; e.g. `BENCH_PROXY_ROOTS=/path/to/main,.`), then BENCH_ROUNDS rounds, each loading every proxy in
 * turn for BENCH_SECONDS at BENCH_CONCURRENCY with "Say hello." chat completions, and reads the proxy process's CPU
 * (all threads, /proc) before and after. Prints CPU ms per call per round and the median per checkout.
 * BENCH_NAMES: off or builtin (default builtin). BENCH_STREAM=1: streamed answers. BENCH_NODE_FLAGS: extra node
 * flags for the proxies (e.g. --perf-basic-prof to read them with Linux perf; their PIDs are printed).
 * BENCH_GATEWAY_DELAY_MS: the stub answers after this long (default 0), so the proxies run at a real gateway's call
 * rate, idle between calls, as in `npm run bench` (CPU per call is higher there than flat out). BENCH_BARE=1 adds
 * the bare Node hop (bench/bare-proxy.ts) as one more target: the floor of an HTTP hop in Node on this machine.
 */
import { loadavg } from "node:os"
import { join } from "node:path"
import { runPhase } from "./lib/load.ts"
import { cpuMsOf, killAllSync, startNodeProcess, stopAll, waitForUrlLine } from "./lib/processes.ts"
import { PROXY_HEADERS, proxyBody, startProxyTarget } from "./lib/proxyTarget.ts"
import { percentile } from "./lib/stats.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { PROXY_CPU_SETTINGS } from "./settings/proxyCpu.ts"

const root = join(import.meta.dirname, "..")
const settings = readBenchSettings("bench/proxyCpu.ts", PROXY_CPU_SETTINGS)
const roots = settings.roots.length === 0 ? [root] : settings.roots.filter((r): r is string => r !== undefined)
const { seconds, rounds, concurrency, names, stream } = settings
const nodeFlags = (settings.nodeFlags ?? "").split(" ").filter((f) => f !== "")
const log = (msg: string) => process.stderr.write(`[bench:proxy-cpu] ${msg}\n`)
const env = (): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = { ...process.env }
  for (const k of Object.keys(out)) if (k.startsWith("BENCH_")) delete out[k]
  return out
}

process.on("exit", killAllSync)
const stub = startNodeProcess("stub gateway", join(root, "bench", "lib", "stubGateway.ts"), { ...env(), STUB_GATEWAY_DELAY_MS: String(settings.gatewayDelayMs) })
const stubUrl = await waitForUrlLine(stub, 30_000)
try {
  const pool = Array.from({ length: 64 }, (_, i) => ({ headers: PROXY_HEADERS, body: proxyBody(i, stream) }))
  let i = 0
  const next = () => pool[i++ % pool.length]
  const proxies = []
  for (const checkout of roots) {
    const proxy = await startProxyTarget({ root: checkout, names, gatewayUrl: stubUrl, apiKey: "svc_benchstubkeyabcdefghijklmnopqrstuvwxyz", env: env(), nodeFlags })
    log(`${checkout}: proxy pid ${proxy.process.pid} at ${proxy.url}`)
    // Module loading, JIT and the connection to the stub: not what a call costs once running.
    await runPhase({ origin: proxy.url, path: "/v1/chat/completions", concurrency: 4, warmupMs: 0, measureMs: 2_000, next, requestTimeoutMs: 30_000 })
    proxies.push({ checkout, proxy, cpu: [] as number[], rps: [] as number[] })
  }
  if (settings.bare) {
    // The floor: the thinnest Node hop (bench/bare-proxy.ts, node:http in, undici out), same stub, same load.
    const bare = startNodeProcess("bare hop", join(root, "bench", "bare-proxy.ts"), { ...env(), BARE_UPSTREAM_URL: stubUrl, PORT: "0" })
    const url = await waitForUrlLine(bare, 30_000)
    await runPhase({ origin: url, path: "/v1/chat/completions", concurrency: 4, warmupMs: 0, measureMs: 2_000, next, requestTimeoutMs: 30_000 })
    proxies.push({ checkout: "bare Node hop", proxy: { process: bare, url, cleanup: () => {} }, cpu: [] as number[], rps: [] as number[] })
  }
  for (let round = 1; round <= rounds; round++) {
    for (const p of proxies) {
      const before = cpuMsOf(p.proxy.process.pid)
      const r = await runPhase({ origin: p.proxy.url, path: "/v1/chat/completions", concurrency, warmupMs: 300, measureMs: seconds * 1000, next, requestTimeoutMs: 30_000 })
      const cpu = (cpuMsOf(p.proxy.process.pid) - before) / Math.max(1, r.answered)
      if (r.errors > 0) throw new Error(`${p.checkout}: ${r.errors} errors, first ${r.firstError}`)
      p.cpu.push(cpu)
      p.rps.push(r.rps)
      log(`round ${round} ${p.checkout}: ${cpu.toFixed(3)} ms CPU/call, ${r.rps.toFixed(0)} req/s, load ${loadavg()[0].toFixed(2)}`)
    }
  }
  const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50)
  process.stdout.write(`names ${names}${stream ? " streamed" : ""} c=${concurrency}, ${rounds} rounds of ${seconds} s, alternated\n`)
  for (const p of proxies) {
    process.stdout.write(`${p.checkout}: median ${median(p.cpu).toFixed(3)} ms CPU/call (rounds ${p.cpu.map((c) => c.toFixed(3)).join(" ")}), median ${median(p.rps).toFixed(0)} req/s\n`)
  }
  for (const p of proxies) {
    await p.proxy.process.stop()
    p.proxy.cleanup()
  }
} finally {
  await stopAll()
}
process.exit(0)
