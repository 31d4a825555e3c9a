/**
 * `npm run bench:proxy`: the local proxy's own cost per call (issue 24 (g)/(h)), with the gateway replaced by a stub
 * that answers at once (bench/lib/stubGateway.ts), so the numbers are the proxy's alone and do not move with the
 * gateway's work. For names off and built-in names: p50 over the stub called directly at c=1, requests/s at c=16,
 * a streamed answer at c=1 (TTFB over the stub's), and the proxy process's CPU ms per call (all threads), with the
 * load average. `npm run bench` measures the whole
 * path with the real gateway. BENCH_SECONDS (default 4) per phase, after a 2 s warm-up of each proxy; BENCH_PROFILE=1 writes each proxy's CPU profile
 * and adds where its time went.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { runPhase } from "./lib/load.ts"
import { cpuMsOf, killAllSync, startNodeProcess, stopAll, waitForUrlLine } from "./lib/processes.ts"
import { profileFiles, profileMarkdown, summariseProfile } from "./lib/profile.ts"
import { PROXY_HEADERS, proxyBody, startProxyTarget } from "./lib/proxyTarget.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { PROXY_BENCH_SETTINGS } from "./settings/proxy.ts"

const root = join(import.meta.dirname, "..")
const { seconds, profile } = readBenchSettings("bench/proxy.ts", PROXY_BENCH_SETTINGS)
const profileDir = profile ? join(tmpdir(), `relay-bench-proxy-profile-${Date.now()}`) : undefined
const log = (msg: string) => process.stderr.write(`[bench:proxy] ${msg}\n`)
const env = (): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = { ...process.env }
  for (const k of Object.keys(out)) if (k.startsWith("BENCH_")) delete out[k]
  return out
}

process.on("exit", killAllSync)
const stub = startNodeProcess("stub gateway", join(root, "bench", "lib", "stubGateway.ts"), env())
const stubUrl = await waitForUrlLine(stub, 30_000)
const rows: string[][] = []
const results: Record<string, unknown> = {}
try {
  const cycle = (stream: boolean) => {
    const pool = Array.from({ length: 64 }, (_, i) => ({ headers: PROXY_HEADERS, body: proxyBody(i, stream) }))
    let i = 0
    return () => pool[i++ % pool.length]
  }
  const next = cycle(false)
  const nextStreamed = cycle(true)
  const phase = (origin: string, path: string, concurrency: number, stream = false) =>
    runPhase({ origin, path, concurrency, warmupMs: 500, measureMs: seconds * 1000, next: stream ? nextStreamed : next, requestTimeoutMs: 30_000 })
  const stubDirect = await phase(stubUrl, "/api/v1/chat/completions", 1)
  const stubStream = await phase(stubUrl, "/api/v1/chat/completions", 1, true)
  for (const names of ["off", "builtin"] as const) {
    const proxy = await startProxyTarget({
      root, names, gatewayUrl: stubUrl, apiKey: "svc_benchstubkeyabcdefghijklmnopqrstuvwxyz", env: env(),
      nodeFlags: profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, names)}`]
    })
    // Modules the first calls load, JIT and the connection to the stub: not what a call costs once running.
    await runPhase({ origin: proxy.url, path: "/v1/chat/completions", concurrency: 4, warmupMs: 0, measureMs: 2_000, next, requestTimeoutMs: 30_000 })
    // Non-streamed at c=1 and c=16, then a streamed answer (three SSE frames) at c=1: the detokenising stream path.
    for (const [concurrency, stream] of [[1, false], [16, false], [1, true]] as const) {
      const before = cpuMsOf(proxy.process.pid)
      const r = await phase(proxy.url, "/v1/chat/completions", concurrency, stream)
      const cpu = (cpuMsOf(proxy.process.pid) - before) / Math.max(1, r.answered)
      const direct = stream ? stubStream : stubDirect
      const added = concurrency === 1 ? r.latencyP50Ms - direct.latencyP50Ms : Number.NaN
      const addedTtfb = stream ? r.ttfbP50Ms - direct.ttfbP50Ms : Number.NaN
      const load = loadavg()[0]
      const mode = stream ? "stream" : "json"
      log(`names ${names} ${mode} c=${concurrency}: ${r.rps.toFixed(0)} req/s p50 ${r.latencyP50Ms.toFixed(2)} ms${stream ? ` ttfb p50 ${r.ttfbP50Ms.toFixed(2)} ms` : ""} (stub direct ${direct.latencyP50Ms.toFixed(2)}) cpu ${cpu.toFixed(2)} ms/call load ${load.toFixed(2)}${r.errors ? ` errors ${r.errors} ${r.firstError}` : ""}`)
      rows.push([names, mode, String(concurrency), r.rps.toFixed(0), r.latencyP50Ms.toFixed(2), Number.isNaN(added) ? "" : added.toFixed(2), Number.isNaN(addedTtfb) ? "" : addedTtfb.toFixed(2), cpu.toFixed(2), load.toFixed(2), String(r.errors)])
      results[`${names}:${stream ? "stream:" : ""}${concurrency}`] = { ...r, cpuMsPerCall: cpu, addedP50Ms: added, addedTtfbP50Ms: addedTtfb, load }
    }
    await proxy.process.stop()
    proxy.cleanup()
  }
  let md = `# Local proxy alone (npm run bench:proxy) ${new Date().toISOString()}\n\nStub gateway answering at once; stub called directly at c=1: p50 ${stubDirect.latencyP50Ms.toFixed(2)} ms, ${stubDirect.rps.toFixed(0)} req/s (non-streamed), TTFB p50 ${stubStream.ttfbP50Ms.toFixed(2)} ms (streamed). "Say hello." chat completions, ${seconds} s per phase.\n\n`
  md += "| names | mode | c | req/s | p50 ms | added p50 ms (over the stub) | added TTFB p50 ms | proxy CPU ms/call | load | errors |\n|---|---|---|---|---|---|---|---|---|---|\n"
  md += rows.map((r) => `| ${r.join(" | ")} |`).join("\n") + "\n"
  if (profileDir !== undefined) {
    for (const names of ["off", "builtin"]) {
      const dir = join(profileDir, names)
      for (const file of profileFiles(dir)) {
        const p = summariseProfile(dir, root, 25, file)
        if (p !== undefined) md += profileMarkdown(p, `proxy (names ${names}) ${file}`)
      }
    }
  }
  process.stdout.write(md)
  mkdirSync(join(root, "bench", "results"), { recursive: true })
  writeFileSync(join(root, "bench", "results", "proxy-latest.md"), md)
  writeFileSync(join(root, "bench", "results", "proxy-latest.json"), JSON.stringify({ at: new Date().toISOString(), seconds, stubDirect, stubStream, results }, null, 2) + "\n")
} finally {
  await stopAll()
}
process.exit(0)
