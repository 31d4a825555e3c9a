/**
 * `npm run bench:egress`: what the egress policy costs per call (issue 31, target <= 0.05 ms on a 2 KB chat body).
 *
 * Walks a 2 KB chat completions body (system + user text, a metadata map, a user field, sampling settings, tools)
 * with the policy as the client does (walkEgress: classify every field, collect the places to tokenise) and as the
 * gateway does (egressPolicyViolation: structure only, with the attestation's declared paths), BENCH_ROUNDS rounds of
 * BENCH_CALLS calls each; reports the median per call of the rounds (CPU time of this thread), prints it beside the
 * machine reference (CPU model, cores, load) and writes bench/results/egress-policy-<timestamp>.json and
 * bench/results/latest-egress-policy.md. The tokenisation itself (detectors, aliases) is not part of this figure:
 * bench/tokeniser.ts and bench/proxy.ts measure it.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import { join } from "node:path"
import { egressPolicyViolation, walkEgress } from "../sdks/typescript/src/wire/egressPolicy.ts"
import { gitCommit } from "./gitCommit.ts"
import { median } from "./lib/stats.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { EGRESS_BENCH_SETTINGS } from "./settings/egressPolicy.ts"

const root = join(import.meta.dirname, "..")
const resultsDir = join(root, "bench", "results")
const { rounds, calls } = readBenchSettings("bench/egressPolicy.ts", EGRESS_BENCH_SETTINGS)
const TARGET_MS = 0.05

const sentence = "Please summarise the attached notes for the quarterly review and keep the tone neutral. "
const body = {
  model: "local-chat",
  temperature: 0.2,
  max_tokens: 400,
  user: "customer-4821",
  metadata: { ticket: "T-1029", team: "support", region: "eu-west" },
  tools: [{ type: "function", function: { name: "lookup", description: "Looks a value up", parameters: { type: "object", properties: { q: { type: "string" } } } } }],
  messages: [
    { role: "system", content: sentence.repeat(4) },
    { role: "user", content: [{ type: "text", text: sentence.repeat(10) }, { type: "text", text: sentence.repeat(6) }] }
  ]
}
const bytes = new TextEncoder().encode(JSON.stringify(body)).byteLength

const perCall = (fn: () => void): number => {
  const results: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    const start = process.cpuUsage()
    for (let i = 0; i < calls; i++) fn()
    const used = process.cpuUsage(start)
    results.push((used.user + used.system) / 1000 / calls)
  }
  return median(results)
}

const loadAtStart = loadavg()
// Warm-up: the JIT, the policy's JSON.
for (let i = 0; i < 5000; i++) walkEgress("chat.completions", body)
// walkEgress checks the depth itself, as the client's tokeniseRequest does once before its copy.
const client = perCall(() => walkEgress("chat.completions", body))
const gateway = perCall(() => egressPolicyViolation("chat.completions", body, []))
const loadAtEnd = loadavg()

const run = {
  startedAt: new Date().toISOString(),
  commit: gitCommit(root),
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown CPU",
  cpus: availableParallelism(),
  loadAtStart,
  loadAtEnd,
  bodyBytes: bytes,
  rounds,
  callsPerRound: calls,
  clientMsPerCall: client,
  gatewayMsPerCall: gateway,
  targetMs: TARGET_MS
}
const verdict = (ms: number) => (ms <= TARGET_MS ? "PASS" : "FAIL")
const report = [
  "# Egress policy cost per call (npm run bench:egress)",
  "",
  `Machine: ${run.cpu}, ${run.cpus} cores, Node ${run.node}, load ${loadAtStart.map((l) => l.toFixed(1)).join("/")} at start, ${loadAtEnd.map((l) => l.toFixed(1)).join("/")} at end; commit ${run.commit}.`,
  `Body: ${bytes} bytes of chat completions JSON; median of ${rounds} rounds of ${calls} calls; CPU time of this thread.`,
  "",
  "| side | ms per call | target | |",
  "|---|---:|---:|---|",
  `| client (depth check + walk) | ${client.toFixed(4)} | ${TARGET_MS} | ${verdict(client)} |`,
  `| gateway (structure check) | ${gateway.toFixed(4)} | ${TARGET_MS} | ${verdict(gateway)} |`,
  ""
].join("\n")
process.stdout.write(`${report}\n`)
mkdirSync(resultsDir, { recursive: true })
const stamp = run.startedAt.replace(/:/g, "-").replace(/\.\d+Z$/, "Z")
writeFileSync(join(resultsDir, `egress-policy-${stamp}.json`), `${JSON.stringify(run, null, 2)}\n`)
writeFileSync(join(resultsDir, "latest-egress-policy.md"), report)
