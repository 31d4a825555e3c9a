/**
 * `npm run bench:mcp`: the MCP server (docs/mcp.md) as a host sees it, with the official MCP client.
 *
 * 1. stdio: `tokenise` on a 2 KB text (prose with names, e-mail addresses and phone numbers), BENCH_MCP_CALLS calls
 *    (default 1,000) after 50 warm-up calls, one at a time: p50 / p90 / p99 / max round trip, with the built-in name
 *    model and with NAME_MODEL=off; beside each, the engine alone in this process on the same text (same count), so
 *    the MCP server's own cost (p50 round trip minus p50 engine) is visible. Target: p50 <= 5 ms.
 * 2. Streamable HTTP: BENCH_MCP_ROUNDS rounds (default 6), each BENCH_MCP_SESSIONS sessions (default 50) in parallel
 *    making BENCH_MCP_HTTP_CALLS calls in all (default 10,000; `tokenise` on a short text, each call minting aliases
 *    into its session's map), the sessions then terminated (DELETE); the server's RSS (from /proc) before, halfway
 *    through and after each round: flat rounds show memory does not grow without bound.
 *
 * 3. Startup: BENCH_MCP_STARTS fresh stdio servers (default 5) per name model setting: the time from spawning
 *    `node programs/mcp.ts` to the answer of `initialize` (what a host waits for before it can list tools), then
 *    `tools/list`, then the first `tokenise`; beside it, where a cold start goes (each module group imported first in
 *    a fresh node process: the MCP SDK, the tokenisation engine with the name model's NLP library, the gateway client).
 *
 * 4. OCR: `tokenise_image` on a PNG of a short letter (rendered by Chromium: names, an e-mail address, a phone number),
 *    through a fresh stdio server: the first image (which starts the OCR worker: its start-up cost is reported
 *    apart), then BENCH_MCP_OCR_CALLS more (default 20): p50 round trip and recognition time, and the server's RSS
 *    before the first image and after the last (what the worker costs in memory).
 *
 * BENCH_MCP_ONLY=startup (or stdio, http, ocr; comma-separated) runs only those parts.
 * Prints the numbers and writes bench/results/mcp-<timestamp>.json and bench/results/latest-mcp.md (a partial run:
 * latest-mcp-<parts>.md).
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { builtinNameModel, createSession, tokeniseText } from "../sdks/typescript/src/tokeniser/index.ts"
import { launchChromium, renderTextPng } from "../test/support/chromium.ts"
import { proseText } from "./lib/sampleText.ts"
import { median, percentile, sortedCopy } from "./lib/stats.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { MCP_BENCH_SETTINGS } from "./settings/mcp.ts"

const root = join(import.meta.dirname, "..")
const resultsDir = join(root, "bench", "results")
const NODE = join(root, "node_modules", ".bin", "node")
const PROGRAM = join(root, "programs", "mcp.ts")
const { stdioCalls, sessions, httpCalls, rounds, starts, ocrCalls, ...settings } = readBenchSettings("bench/mcp.ts", MCP_BENCH_SETTINGS)
const only = new Set<string>(settings.only)
const scratch = mkdtempSync(join(tmpdir(), "pr-bench-mcp-"))
const env = { ...(process.env as Record<string, string>), NAME_MODEL: "builtin", PRIVACY_RELAY_CONFIG_DIR: scratch, MCP_RECEIPTS_FILE: join(scratch, "receipts.jsonl") }

/** 2 KB of prose with names, plus structured values so every detector path runs. */
const TAIL = " Mail jane.doe@example.com or call +44 20 7946 0958."
const TEXT = proseText(2048 - TAIL.length) + TAIL
const SHORT = "Ask Maria Garcia (maria.garcia@example.org, +1 415 555 0134) about invoice 4471."

const ms = (n: number) => Math.round(n * 1000) / 1000

const call = async (client: Client, text: string) => {
  const result = await client.callTool({ name: "tokenise", arguments: { text } })
  if (result.isError) throw new Error(`tokenise failed: ${JSON.stringify(result.content)}`)
}

const summarise = (samples: Array<number>) => {
  const sorted = sortedCopy(samples)
  return { p50_ms: ms(percentile(sorted, 50)), p90_ms: ms(percentile(sorted, 90)), p99_ms: ms(percentile(sorted, 99)), max_ms: ms(sorted[sorted.length - 1]!) }
}

/** The engine alone, in this process: what any tokenise costs before the protocol. */
const engineBench = async (nameModel: "builtin" | "off") => {
  const names = nameModel === "off" ? "off" as const : builtinNameModel
  for (let i = 0; i < 50; i++) await tokeniseText(TEXT, createSession({ names }))
  const samples: Array<number> = []
  for (let i = 0; i < stdioCalls; i++) {
    const t0 = performance.now()
    await tokeniseText(TEXT, createSession({ names }))
    samples.push(performance.now() - t0)
  }
  return summarise(samples)
}

const stdioBench = async (nameModel: "builtin" | "off") => {
  const client = new Client({ name: "bench", version: "1" })
  await client.connect(new StdioClientTransport({ command: NODE, args: [PROGRAM], env: { ...env, NAME_MODEL: nameModel }, stderr: "inherit" }))
  for (let i = 0; i < 50; i++) await call(client, TEXT)
  const samples: Array<number> = []
  for (let i = 0; i < stdioCalls; i++) {
    const t0 = performance.now()
    await call(client, TEXT)
    samples.push(performance.now() - t0)
  }
  await client.close()
  const engine = await engineBench(nameModel)
  const round = summarise(samples)
  return { name_model: nameModel, calls: stdioCalls, text_bytes: Buffer.byteLength(TEXT), ...round, engine_alone: engine, mcp_overhead_p50_ms: ms(round.p50_ms - engine.p50_ms) }
}

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return m === null ? Number.NaN : Math.round(Number(m[1]) / 102.4) / 10
}

const startHttp = () =>
  new Promise<{ url: string; pid: number; stop: () => void }>((resolve, reject) => {
    const child = spawn(NODE, [PROGRAM], { env: { ...env, MCP_TRANSPORT: "http", MCP_PORT: "0" }, stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    child.stderr.on("data", (chunk) => {
      err += chunk
      const m = /"url":"([^"]+)"/.exec(err)
      if (m !== null) resolve({ url: m[1]!, pid: child.pid!, stop: () => child.kill("SIGTERM") })
    })
    child.once("exit", (code) => reject(new Error(`MCP server exited ${code}: ${err}`)))
  })

const httpBench = async () => {
  const server = await startHttp()
  const connect = async () => {
    const client = new Client({ name: "bench", version: "1" })
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    return client
  }
  const warm = await connect()
  for (let i = 0; i < 20; i++) await call(warm, SHORT)
  await warm.close()
  const before = rssMb(server.pid)
  const perSession = Math.ceil(httpCalls / sessions)
  const results = []
  for (let r = 1; r <= rounds; r++) {
    const clients = await Promise.all(Array.from({ length: sessions }, connect))
    let done = 0
    let half = Number.NaN
    const t0 = performance.now()
    await Promise.all(clients.map(async (client) => {
      for (let i = 0; i < perSession; i++) {
        await call(client, SHORT)
        if (++done === Math.floor((perSession * sessions) / 2)) half = rssMb(server.pid)
      }
    }))
    const seconds = (performance.now() - t0) / 1000
    const after = rssMb(server.pid)
    // DELETE /mcp ends each session on the server (its alias map goes with it), as a well-behaved host does.
    await Promise.all(clients.map(async (c) => {
      await (c.transport as StreamableHTTPClientTransport).terminateSession()
      await c.close()
    }))
    results.push({ round: r, calls: perSession * sessions, seconds: Math.round(seconds * 10) / 10, calls_per_second: Math.round((perSession * sessions) / seconds), rss_mb_halfway: half, rss_mb_after: after })
  }
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const end = rssMb(server.pid)
  server.stop()
  return { sessions, calls_per_round: perSession * sessions, rss_mb_before: before, rounds: results, rss_mb_end: end }
}

/** One cold start: spawn to `initialize` answered, then tools/list, then the first tokenise (each from the previous). */
const coldStart = async (nameModel: "builtin" | "off") => {
  const client = new Client({ name: "bench", version: "1" })
  const t0 = performance.now()
  await client.connect(new StdioClientTransport({ command: NODE, args: [PROGRAM], env: { ...env, NAME_MODEL: nameModel }, stderr: "inherit" }))
  const t1 = performance.now()
  await client.listTools()
  const t2 = performance.now()
  await call(client, SHORT)
  const t3 = performance.now()
  await client.close()
  return { initialize_ms: t1 - t0, tools_list_ms: t2 - t1, first_tokenise_ms: t3 - t2 }
}

/** Where a cold start goes: each group imported first, in order, in a fresh node process (what it adds to startup). */
const IMPORT_GROUPS: ReadonlyArray<[string, ReadonlyArray<string>]> = [
  ["node itself (empty script)", []],
  ["MCP SDK (server, stdio, zod)", ["@modelcontextprotocol/sdk/server/index.js", "@modelcontextprotocol/sdk/server/stdio.js", "zod"]],
  ["compromise (the built-in name model's NLP library)", ["compromise"]],
  ["the rest of the tokenisation engine (detectors, gazetteer, libphonenumber)", [join(root, "sdks/typescript/src/tokeniser/index.ts")]],
  ["the gateway client (SDK)", [join(root, "sdks/typescript/src/index.ts")]],
  ["the rest of the MCP server (its modules, as programs/mcp.ts imports them)", [join(root, "sdks/typescript/src/mcp/server.ts"), join(root, "sdks/typescript/src/mcp/context.ts"), join(root, "sdks/typescript/src/mcp/httpServer.ts")]]
]

const importBreakdown = async () => {
  const script = join(scratch, "imports.mjs")
  const lines = IMPORT_GROUPS.map(([label, specs], i) =>
    `{ const t = performance.now(); ${specs.map((m) => `await import(${JSON.stringify(m.startsWith("/") ? `file://${m}` : import.meta.resolve(m))});`).join(" ")} out.push([${JSON.stringify(label)}, ${i === 0 ? "performance.now()" : "performance.now() - t"}]) }`)
  writeFileSync(script, `const out = []\n${lines.join("\n")}\nconsole.log(JSON.stringify(out))\n`)
  const runs: Array<Array<[string, number]>> = []
  for (let i = 0; i < starts; i++) {
    const child = spawn(NODE, [script], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (c) => (out += c))
    const code = await new Promise((resolve) => child.once("exit", resolve))
    if (code !== 0) throw new Error(`the import breakdown script exited ${code}`)
    runs.push(JSON.parse(out))
  }
  return IMPORT_GROUPS.map(([label], i) => ({ group: label, median_ms: ms(median(runs.map((r) => r[i]![1]))) }))
}

const startupBench = async () => {
  const bySetting: Array<Record<string, unknown> & { name_model: string; starts: number; initialize_ms_median: number; initialize_ms_max: number; tools_list_ms_median: number; first_tokenise_ms_median: number }> = []
  for (const nameModel of ["builtin", "off"] as const) {
    const samples: Array<Awaited<ReturnType<typeof coldStart>>> = []
    for (let i = 0; i < starts; i++) samples.push(await coldStart(nameModel))
    const med = (f: (s: (typeof samples)[number]) => number) => ms(median(samples.map(f)))
    bySetting.push({
      name_model: nameModel,
      starts,
      initialize_ms_median: med((s) => s.initialize_ms),
      initialize_ms_max: ms(Math.max(...samples.map((s) => s.initialize_ms))),
      tools_list_ms_median: med((s) => s.tools_list_ms),
      first_tokenise_ms_median: med((s) => s.first_tokenise_ms),
      initialize_to_first_tokenise_ms_median: med((s) => s.initialize_ms + s.tools_list_ms + s.first_tokenise_ms)
    })
  }
  return { cold_starts: bySetting, imports: await importBreakdown() }
}

const LETTER = [
  "Dear Maria Garcia,",
  "thank you for your letter of 3 March.",
  "Please write to maria.garcia@example.org",
  "or call +44 20 7946 0958 about invoice 4471.",
  "Kind regards, John Smith"
]

const ocrBench = async () => {
  const browser = await launchChromium()
  let png: Buffer
  try {
    png = await renderTextPng(browser, LETTER, { width: 900, height: 320, fontPx: 26 })
  } finally {
    await browser.close()
  }
  const transport = new StdioClientTransport({ command: NODE, args: [PROGRAM], env: { ...env, NAME_MODEL: "builtin" }, stderr: "inherit" })
  const client = new Client({ name: "bench", version: "1" })
  await client.connect(transport)
  // The engine (not OCR) loads in the background after the handshake; a tokenise waits for it, so the first image
  // measures OCR's own start.
  await call(client, SHORT)
  const pid = transport.pid!
  const rssBefore = rssMb(pid)
  const image = async () => {
    const t0 = performance.now()
    const result = await client.callTool({ name: "tokenise_image", arguments: { filename: "letter.png", content_base64: png.toString("base64") } })
    if (result.isError) throw new Error(`tokenise_image failed: ${JSON.stringify(result.content)}`)
    return { roundTrip: performance.now() - t0, ...(result.structuredContent as { replaced: number; ocr: { worker_start_ms: number | null; recognise_ms: number; width: number; height: number } }) }
  }
  const first = await image()
  const rest = []
  for (let i = 0; i < ocrCalls; i++) rest.push(await image())
  const rssAfter = rssMb(pid)
  await client.close()
  return {
    image: { width: first.ocr.width, height: first.ocr.height, png_bytes: png.length },
    replaced: first.replaced,
    first: { round_trip_ms: ms(first.roundTrip), worker_start_ms: first.ocr.worker_start_ms, recognise_ms: first.ocr.recognise_ms },
    warm: { calls: ocrCalls, round_trip: summarise(rest.map((r) => r.roundTrip)), recognise_p50_ms: ms(median(rest.map((r) => r.ocr.recognise_ms))) },
    rss_mb_before_first_image: rssBefore,
    rss_mb_after: rssAfter
  }
}

const stdio = only.has("stdio") ? [await stdioBench("builtin"), await stdioBench("off")] : []
for (const r of stdio) {
  console.log(`stdio tokenise ${r.text_bytes} B x ${r.calls}, NAME_MODEL=${r.name_model}: p50 ${r.p50_ms} ms, p90 ${r.p90_ms} ms, p99 ${r.p99_ms} ms, max ${r.max_ms} ms; engine alone p50 ${r.engine_alone.p50_ms} ms -> MCP overhead p50 ${r.mcp_overhead_p50_ms} ms (target p50 <= 5 ms: ${r.p50_ms <= 5 ? "met" : "NOT met"})`)
}
const http = only.has("http") ? await httpBench() : undefined
if (http !== undefined) {
  console.log(`http: RSS before ${http.rss_mb_before} MB`)
  for (const r of http.rounds) console.log(`http round ${r.round}: ${r.calls} calls across ${http.sessions} sessions in ${r.seconds} s (${r.calls_per_second}/s); RSS halfway ${r.rss_mb_halfway} MB, after ${r.rss_mb_after} MB`)
  console.log(`http: RSS at the end (sessions terminated) ${http.rss_mb_end} MB`)
}
const startup = only.has("startup") ? await startupBench() : undefined
if (startup !== undefined) {
  for (const r of startup.cold_starts) {
    console.log(`startup NAME_MODEL=${r.name_model}, ${r.starts} cold starts (medians): initialize answered ${r.initialize_ms_median} ms after spawn (max ${r.initialize_ms_max}), tools/list +${r.tools_list_ms_median} ms, first tokenise +${r.first_tokenise_ms_median} ms`)
  }
  for (const g of startup.imports) console.log(`startup import: ${g.group}: ${g.median_ms} ms`)
}

const ocr = only.has("ocr") ? await ocrBench() : undefined
if (ocr !== undefined) {
  console.log(`ocr tokenise_image ${ocr.image.width}x${ocr.image.height} PNG (${ocr.replaced} values aliased): first image ${ocr.first.round_trip_ms} ms (worker start ${ocr.first.worker_start_ms} ms, recognition ${ocr.first.recognise_ms} ms); then ${ocr.warm.calls} images p50 ${ocr.warm.round_trip.p50_ms} ms (recognition p50 ${ocr.warm.recognise_p50_ms} ms); server RSS ${ocr.rss_mb_before_first_image} MB before the first image, ${ocr.rss_mb_after} MB after`)
}

const at = new Date().toISOString().replace(/\.\d+Z$/, "Z").replaceAll(":", "-")
const machine = { cpus: availableParallelism(), cpu_model: cpus()[0]?.model ?? "unknown", load_average_1m: Math.round(loadavg()[0]! * 100) / 100, node: process.version }
const record = { at, machine, parts: [...only], stdio, http, startup, ocr }
mkdirSync(resultsDir, { recursive: true })
writeFileSync(join(resultsDir, `mcp-${at}.json`), `${JSON.stringify(record, null, 2)}\n`)
const sections: Array<string> = []
if (stdio.length > 0) {
  sections.push(
    `## stdio: tokenise on a ${stdio[0]!.text_bytes}-byte text, official MCP client, ${stdioCalls} calls one at a time\n\n` +
      `| NAME_MODEL | p50 | p90 | p99 | max | engine alone p50 | MCP overhead p50 | target p50 <= 5 ms |\n|---|---|---|---|---|---|---|---|\n` +
      stdio.map((r) => `| ${r.name_model} | ${r.p50_ms} ms | ${r.p90_ms} ms | ${r.p99_ms} ms | ${r.max_ms} ms | ${r.engine_alone.p50_ms} ms | ${r.mcp_overhead_p50_ms} ms | ${r.p50_ms <= 5 ? "met" : "not met"} |`).join("\n")
  )
}
if (http !== undefined) {
  sections.push(
    `## Streamable HTTP: ${http.sessions} concurrent sessions, ${http.calls_per_round} tokenise calls per round, sessions terminated after each round\n\n` +
      `RSS before: ${http.rss_mb_before} MB; at the end: ${http.rss_mb_end} MB.\n\n| round | seconds | calls/s | RSS halfway | RSS after |\n|---|---|---|---|---|\n` +
      http.rounds.map((r) => `| ${r.round} | ${r.seconds} | ${r.calls_per_second} | ${r.rss_mb_halfway} MB | ${r.rss_mb_after} MB |`).join("\n")
  )
}
if (startup !== undefined) {
  sections.push(
    `## Startup: ${starts} cold stdio starts per setting (medians, ms after the previous step)\n\n` +
      `| NAME_MODEL | initialize answered (from spawn) | max | tools/list | first tokenise |\n|---|---|---|---|---|\n` +
      startup.cold_starts.map((r) => `| ${r.name_model} | ${r.initialize_ms_median} | ${r.initialize_ms_max} | +${r.tools_list_ms_median} | +${r.first_tokenise_ms_median} |`).join("\n") +
      `\n\nWhere a cold start goes (each group imported first, in this order, in a fresh node process; medians):\n\n| group | ms |\n|---|---|\n` +
      startup.imports.map((g) => `| ${g.group} | ${g.median_ms} |`).join("\n")
  )
}
// A partial run (BENCH_MCP_ONLY) gets its own latest file, so it does not hide the last full run's numbers.
const latest = only.size === 4 ? "latest-mcp.md" : `latest-mcp-${[...only].sort().join("-")}.md`
if (ocr !== undefined) {
  sections.push(
    `## OCR: tokenise_image on a ${ocr.image.width} x ${ocr.image.height} PNG letter (${ocr.image.png_bytes} bytes), stdio\n\n` +
      `| | round trip | OCR worker start | recognition |\n|---|---|---|---|\n` +
      `| first image | ${ocr.first.round_trip_ms} ms | ${ocr.first.worker_start_ms} ms | ${ocr.first.recognise_ms} ms |\n` +
      `| next ${ocr.warm.calls} (p50) | ${ocr.warm.round_trip.p50_ms} ms | - | ${ocr.warm.recognise_p50_ms} ms |\n\n` +
      `Server RSS: ${ocr.rss_mb_before_first_image} MB before the first image, ${ocr.rss_mb_after} MB after the last.`
  )
}
writeFileSync(
  join(resultsDir, latest),
  `# MCP server benchmark (${at})\n\n` +
    `Machine: ${machine.cpus} CPUs (${machine.cpu_model}), load average ${machine.load_average_1m} at the end, Node ${machine.node}. Parts run: ${[...only].join(", ")}.\n\n` +
    sections.join("\n\n") + "\n"
)
console.log(`written: bench/results/mcp-${at}.json and bench/results/${latest}`)
