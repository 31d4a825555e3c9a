/**
 * `npm run bench:timeline`: where a c=1 gateway call's time goes (issue 41 item 1). Starts the fake provider and the
 * gateway (PostgreSQL/Redis when DATABASE_URL/REDIS_URL are set) with every request traced
 * (TRACE_SAMPLE_RATIO=1) and its spans exported over OTLP/HTTP to a collector in this process, then sends
 * BENCH_TIMELINE_CALLS attested, idempotent calls one after another (non-streamed chat, then streamed chat).
 *
 * For each call it lines up, on the call's own clock (0 = the gateway's request span began): the request's spans
 * (attestation, upstream headers, settlement) and its SQL statements (the statement span covers the pool checkout,
 * the round trip and the server's work), the Redis admission script, and the sealing writer's rounds (sign, then
 * the relay_settle_many statement; the writer is its own fiber, so its spans are matched to the call by time, which
 * at c=1 is exact). It prints the median start and duration of each, the Server-Timing stages of the same calls,
 * and the gaps nothing accounts for (fiber hops, event-loop turns, the answer's write).
 *
 * Tracing adds its own cost (a span is a few µs): compare stages with each other, not with `npm run bench`.
 * Settings: BENCH_TIMELINE_CALLS (400), BENCH_TIMELINE_STREAM=0 (non-streamed only), the rest in
 * bench/settings/timeline.ts and docs/benchmark.md.
 */
import { createServer, type IncomingMessage } from "node:http"
import { loadavg } from "node:os"
import { Pool } from "undici"
import { parseServerTiming } from "../src/http/serverTiming.ts"
import { attestedPool, type AttestedRequest } from "./lib/attested.ts"
import { fundedBenchKey, startBenchFakeProvider, startBenchGateway } from "./lib/benchGateway.ts"
import { killAllSync, stopAll } from "./lib/processes.ts"
import { median } from "./lib/stats.ts"
import { createBenchStorage } from "./lib/storage.ts"
import { readBenchSettings, storageEnv } from "./lib/benchSettings.ts"
import { TIMELINE_SETTINGS } from "./settings/timeline.ts"

const log = (msg: string) => process.stderr.write(`[timeline] ${msg}\n`)
const settings = readBenchSettings("bench/timeline.ts", TIMELINE_SETTINGS)
const calls = settings.calls
const withStream = settings.stream

interface Span {
  readonly traceId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly startMs: number
  readonly endMs: number
  readonly attributes: Record<string, string>
}

/** OTLP/HTTP JSON (what the gateway's OtlpTracer sends): resourceSpans[].scopeSpans[].spans[]. */
const collected: Span[] = []
const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}
const collector = createServer((req, res) => {
  readBody(req).then((text) => {
    const body = JSON.parse(text) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<any> }> }> }
    for (const rs of body.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          const attributes: Record<string, string> = {}
          for (const a of s.attributes ?? []) attributes[a.key] = String(Object.values(a.value ?? {})[0] ?? "")
          collected.push({
            traceId: s.traceId,
            parentSpanId: s.parentSpanId === "" ? undefined : s.parentSpanId,
            name: s.name,
            startMs: Number(BigInt(s.startTimeUnixNano) / 1000n) / 1000,
            endMs: Number(BigInt(s.endTimeUnixNano) / 1000n) / 1000,
            attributes
          })
        }
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}")
  }, () => res.writeHead(400).end())
})

/** A short, stable label for a span: SQL statements by what they do. */
const label = (s: Span): string => {
  const query = s.attributes["db.query.text"] ?? s.attributes["db.statement"] ?? ""
  if (query === "") return s.name
  if (query.includes("relay_settle_many")) return "sql: relay_settle_many (settlement statement)"
  if (query.includes("idempotency_records")) return "sql: stored-response look-up"
  const words = query.replace(/\s+/g, " ").trim().split(" ").slice(0, 4).join(" ")
  return `sql: ${words}`
}

interface CallWindow {
  readonly traceId: string
  readonly startMs: number
  readonly endMs: number
}

const diff = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a - b)

const summarise = (title: string, windows: ReadonlyArray<CallWindow>, timings: ReadonlyArray<Record<string, number>>) => {
  const byTrace = new Map<string, Span[]>()
  for (const s of collected) (byTrace.get(s.traceId) ?? byTrace.set(s.traceId, []).get(s.traceId)!).push(s)
  const writerSpans = collected.filter((s) => s.name.startsWith("ReceiptSealer.") || (s.parentSpanId === undefined && label(s).startsWith("sql: relay_settle")))
  const rows = new Map<string, { starts: number[]; durations: number[]; byCall: Map<number, { start: number; end: number }> }>()
  let call = 0
  const add = (name: string, start: number, duration: number) => {
    const r = rows.get(name) ?? rows.set(name, { starts: [], durations: [], byCall: new Map() }).get(name)!
    r.starts.push(start)
    r.durations.push(duration)
    if (!r.byCall.has(call)) r.byCall.set(call, { start, end: start + duration })
  }
  const totals: number[] = []
  for (const w of windows) {
    call++
    totals.push(w.endMs - w.startMs)
    for (const s of byTrace.get(w.traceId) ?? []) add(label(s), s.startMs - w.startMs, s.endMs - s.startMs)
    // The sealing writer's fiber: spans of its own trace, inside this call's window (c=1: only this call's).
    for (const s of writerSpans) {
      if (s.startMs >= w.startMs && s.startMs <= w.endMs && !(byTrace.get(w.traceId) ?? []).includes(s)) {
        add(`writer: ${label(s)}`, s.startMs - w.startMs, s.endMs - s.startMs)
      }
    }
  }
  const lines = [`\n### ${title}: ${windows.length} calls, gateway request span p50 ${median(totals).toFixed(3)} ms\n`]
  lines.push("| span | calls with it | start p50 (ms) | duration p50 (ms) | end p50 (ms) |", "|---|---:|---:|---:|---:|")
  const ordered = [...rows.entries()].sort((a, b) => median(a[1].starts) - median(b[1].starts))
  for (const [name, r] of ordered) {
    const start = median(r.starts)
    const duration = median(r.durations)
    lines.push(`| ${name} | ${(r.starts.length / windows.length).toFixed(2)} | ${start.toFixed(3)} | ${duration.toFixed(3)} | ${(start + duration).toFixed(3)} |`)
  }
  // The waits between the steps, each call's own (a difference of two medians would mix calls).
  // The writer's spans join the call's trace when the call started the writer, else they are matched by time.
  const at = (name: string, c: number, edge: "start" | "end") =>
    (rows.get(name) ?? rows.get(`writer: ${name}`))?.byCall.get(c)?.[edge]
  const steps: ReadonlyArray<readonly [string, (c: number) => number | undefined]> = [
    ["attestation and stored-response look-up both done -> admission sent", (c) => {
      const a = at("relay.attestation", c, "end"), l = at("sql: stored-response look-up", c, "end"), s = at("redis.admit", c, "start")
      return a === undefined || l === undefined || s === undefined ? undefined : s - Math.max(a, l)
    }],
    ["admission answered -> upstream request sent", (c) => diff(at("relay.upstream.headers", c, "start"), at("redis.admit", c, "end"))],
    ["upstream headers -> settlement asked (JSON: the body read)", (c) => diff(at("relay.settle", c, "start"), at("relay.upstream.headers", c, "end"))],
    ["settlement asked -> writer signing", (c) => diff(at("ReceiptSealer.sign", c, "start"), at("relay.settle", c, "start"))],
    ["signed -> settlement statement sent", (c) => diff(at("sql: relay_settle_many (settlement statement)", c, "start"), at("ReceiptSealer.sign", c, "end"))],
    ["statement answered -> settlement returns", (c) => diff(at("relay.settle", c, "end"), at("sql: relay_settle_many (settlement statement)", c, "end"))],
    ["settlement returned -> request span ends (receipt headers, the answer written)", (c) => diff(at("POST /api/v1/chat/completions", c, "end"), at("relay.settle", c, "end"))]
  ]
  lines.push("", "| wait between steps | p50 (ms) |", "|---|---:|")
  for (const [name, f] of steps) {
    const values = Array.from({ length: windows.length }, (_, i) => f(i + 1)).filter((v): v is number => v !== undefined)
    if (values.length > 0) lines.push(`| ${name} | ${median(values).toFixed(3)} |`)
  }
  if (timings.length > 0) {
    const names = [...new Set(timings.flatMap((t) => Object.keys(t)))]
    lines.push("", "Server-Timing of the same calls (p50 per stage, ms): " + names.map((n) => `${n} ${median(timings.map((t) => t[n] ?? 0)).toFixed(3)}`).join(", "))
  }
  return lines.join("\n") + "\n"
}

const main = async () => {
  const collectorUrl = await new Promise<string>((resolve) =>
    collector.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(collector.address() as { port: number }).port}`)))
  const storage = await createBenchStorage(storageEnv(settings))
  try {
    const { url: fakeUrl } = await startBenchFakeProvider()
    // Every request traced, its spans exported to this process's collector.
    const { url: gatewayUrl } = await startBenchGateway({
      storage,
      providerUrl: fakeUrl,
      env: { TRACE_SAMPLE_RATIO: "1", OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl }
    })
    const funded = await fundedBenchKey(gatewayUrl, storage, "timeline", "198.18.253.1", "100000")
    log(`storage ${storage.sql}+${storage.shared}, ${calls} calls a kind, load ${loadavg().map((x) => x.toFixed(2)).join("/")}`)

    let out = `# c=1 call timeline (${new Date().toISOString()}, ${storage.sql} + ${storage.shared}, load ${loadavg().map((x) => x.toFixed(2)).join("/")})\n`
    for (const stream of withStream ? [false, true] : [false]) {
      const requests: AttestedRequest[] = await attestedPool(calls, stream, `Bearer ${funded.apiKey}`)
      const pool = new Pool(gatewayUrl, { connections: 1, pipelining: 1 })
      const traceparents: string[] = []
      const timings: Array<Record<string, number>> = []
      collected.length = 0
      for (const [i, req] of requests.entries()) {
        // Our own trace id per call, so its spans are found by it.
        const traceId = crypto.randomUUID().replaceAll("-", "")
        const res = await pool.request({ path: "/api/v1/chat/completions", method: "POST", headers: { ...req.headers, traceparent: `00-${traceId}-${"1".repeat(16)}-01` }, body: req.body })
        const timing = res.headers["server-timing"]
        await res.body.text()
        if (res.statusCode !== 200) throw new Error(`call ${i} answered ${res.statusCode}`)
        // The first fifth warms the gateway up (JIT, pools, caches) and is not counted.
        if (i < calls / 5) continue
        traceparents.push(traceId)
        if (typeof timing === "string") timings.push(Object.fromEntries(parseServerTiming(timing).map((t) => [t.name, t.ms])))
      }
      await pool.close()
      // The tracer exports in batches: wait until the last call's spans are in.
      const last = traceparents.at(-1)!
      for (let waited = 0; waited < 20_000 && !collected.some((s) => s.traceId === last && s.parentSpanId === "1".repeat(16)); waited += 100) {
        await new Promise((r) => setTimeout(r, 100))
      }
      await new Promise((r) => setTimeout(r, 1_500))
      const windows: CallWindow[] = []
      for (const traceId of traceparents) {
        const rootSpan = collected.find((s) => s.traceId === traceId && s.parentSpanId === "1".repeat(16))
        if (rootSpan !== undefined) windows.push({ traceId, startMs: rootSpan.startMs, endMs: rootSpan.endMs })
      }
      out += summarise(stream ? "streamed chat completion" : "chat completion (JSON)", windows, timings)
    }
    process.stdout.write(out)
  } finally {
    await stopAll()
    await storage.drop()
    collector.close()
  }
}

process.on("exit", killAllSync)
main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`[timeline] failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  stopAll().finally(() => process.exit(1))
})
