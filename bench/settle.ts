/**
 * `node bench/settle.ts`: the settlement path alone (issue 24), in-process, without HTTP, attestation or upstream:
 * for each call a wallet hold, then one settlement through the sealing actor (v2 + v1 receipts, usage, debit, hold
 * release and an idempotent response whose render countersigns, like a relayed call with an Idempotency-Key).
 * Prints wall time, this process's CPU per call and the database server's CPU per call, for each concurrency and
 * tenant count. The full relay bench (bench/run.ts) is the reference; this isolates the stage it calls `settle`
 * so that a change to the sealer can be measured on a shared machine in seconds.
 *
 * Storage as the tests pick it (DATABASE_URL set: a fresh PostgreSQL database; else in-memory PGlite).
 * BENCH_SETTLE_CALLS (per scenario, default 2000), BENCH_SETTLE_SCENARIOS ("1x1,16x1,16x8": concurrency x tenants).
 */
import { Effect } from "effect"
import { loadavg } from "node:os"
import { createOrg, creditWallet } from "../layers/AdminOperations.ts"
import { ReceiptSealer } from "../services/ReceiptSealer.ts"
import { Settlement } from "../services/Settlement.ts"
import { startTestGateway } from "../test/support/gateway.ts"
import { benchCompletedCall } from "./lib/benchCompletedCall.ts"
import { cpuMsOfCommands } from "./lib/processes.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { SETTLE_SETTINGS } from "./settings/settle.ts"

const { calls, scenarios } = readBenchSettings("bench/settle.ts", SETTLE_SETTINGS)

const gw = await startTestGateway({ RECEIPT_CHAIN_VERIFY_MS: "0", TRANSPARENCY_SEQUENCE_MS: "0", WEBHOOK_DISPATCHER: "off" })
const run = <A>(effect: Effect.Effect<A, any, any>) => gw.runtime.runPromise(effect as Effect.Effect<A>)

const newTenant = async () => {
  const { org_id } = await run(createOrg({ name: "bench settle" }))
  await run(creditWallet({ org_id, usd: "100000" }))
  return org_id
}

let n = 0
const oneCall = (orgId: string) =>
  Effect.gen(function*() {
    const settlement = yield* Settlement
    const sealer = yield* ReceiptSealer
    const i = ++n
    const hold = yield* settlement.hold(orgId, 5_000n)
    yield* sealer.settle({ orgId, ...benchCompletedCall(i, orgId, hold.id) })
  })

try {
  process.stdout.write(`storage ${gw.storage.mode.sql}, ${calls} calls per scenario, load average ${loadavg().map((x) => x.toFixed(2)).join("/")}\n`)
  for (const { concurrency, tenants } of scenarios) {
    const orgs = await Promise.all(Array.from({ length: tenants }, newTenant))
    await run(Effect.forEach(orgs, (o) => oneCall(o), { concurrency: "unbounded" })) // warm: chains exist, heads cached
    const commits = async () => {
      if (gw.storage.mode.sql !== "postgres") return 0
      // PostgreSQL publishes a backend's counters about once a second.
      await new Promise((r) => setTimeout(r, 1_200))
      return Number((await gw.query<{ n: string }>("SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()"))[0]!.n)
    }
    const commits0 = await commits()
    let next = 0
    const cpu0 = process.cpuUsage()
    const db0 = cpuMsOfCommands(["postgres"])
    const t0 = performance.now()
    await run(Effect.forEach(Array.from({ length: concurrency }), () =>
      Effect.gen(function*() {
        while (next < calls) {
          const i = next++
          yield* oneCall(orgs[i % tenants]!)
        }
      }), { concurrency: "unbounded" }))
    const wallMs = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    const dbMs = cpuMsOfCommands(["postgres"]) - db0
    const commitsPerCall = ((await commits()) - commits0) / calls
    process.stdout.write(
      `c=${String(concurrency).padStart(2)} tenants=${String(tenants).padStart(2)}: ${(calls / (wallMs / 1000)).toFixed(0).padStart(5)} calls/s, ` +
        `${(wallMs / calls * concurrency).toFixed(2)} ms/call latency (mean), process CPU ${((cpu.user + cpu.system) / 1000 / calls).toFixed(3)} ms/call, ` +
        `postgres CPU ${(dbMs / calls).toFixed(3)} ms/call (all databases)` +
        (gw.storage.mode.sql === "postgres" ? `, ${commitsPerCall.toFixed(2)} commits/call (reads included)` : "") + "\n"
    )
  }
  process.stdout.write(`load average at end ${loadavg().map((x) => x.toFixed(2)).join("/")}\n`)
} finally {
  await gw.close()
}
