/**
 * `node bench/settleStatement.ts`: the settlement statement alone, on PostgreSQL, old schema against new in the same
 * minutes. Two fresh databases on DATABASE_URL's server: "base" migrated up to BENCH_SQL_BASE_UPTO (default the
 * migration before the newest), "head" migrated fully. Each call is one completed, idempotent relay call's batch
 * signed by the real TenantBatch (v2 + v1 receipts, usage, ledger, transparency leaf, chain heads, debit, a released
 * hold that is not in wallet_holds as with Redis/memory admission, the stored response) and sent as the sealing
 * writer sends it (the same statement text as layers/pg/ReceiptSealer.ts). Blocks of calls alternate between the two
 * databases; per block it reads `relay_settle`'s and `relay_settle_many`'s own time from pg_stat_user_functions
 * (track_functions = pl is set on both databases) and the statement's round trip as the client sees it, with the
 * durable commit. Prints the medians over blocks and head/base ratios: read the ratios, the machine is shared.
 *
 * Settings: bench/settings/settleStatement.ts (docs/benchmark.md, "Settings"). With BENCH_SQL_JOBS above 1 the
 * per-call figures are per statement.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { generateKeyPairSync } from "node:crypto"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { loadavg } from "node:os"
import { migrations } from "../migrations/index.ts"
import { nodeSignerFromKeyObject } from "../layers/crypto/nodeEs256Signer.ts"
import { STORED_COLUMNS, STORED_RECORDSET_IN_BATCH, STORED_UPSERT } from "../layers/pg/idempotencyRecords.ts"
import type { ChainHead } from "../layers/pg/settleBatch.ts"
import { chainsOf, type Job, TenantBatch } from "../layers/pg/tenantBatch.ts"
import { GENESIS_PREV_HASH } from "../sdks/typescript/src/wire/receipts/chain.ts"
import pgSimpleQuery from "../test/support/pgSimpleQuery.ts"
import { benchCompletedCall } from "./lib/benchCompletedCall.ts"
import { readBenchSettings } from "./lib/benchSettings.ts"
import { SETTLE_STATEMENT_SETTINGS } from "./settings/settleStatement.ts"

const settings = readBenchSettings("bench/settleStatement.ts", SETTLE_STATEMENT_SETTINGS)
const { databaseUrl, blocks, calls: callsPerBlock, jobs: jobsPerBatch, baseUpTo } = settings
const names = Object.keys(migrations)

const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 8)
const urlOf = (db: string) => {
  const url = new URL(databaseUrl)
  url.pathname = `/${db}`
  return url.toString()
}

const privateKey = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey
const signer = nodeSignerFromKeyObject("bench-kid", privateKey)
const orgId = "org_bench_settle_sql"

interface Target {
  readonly label: string
  readonly db: string
  readonly run: <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Promise<A>
  readonly close: () => Promise<void>
  readonly heads: Map<string, ChainHead>
  readonly wall: Array<number>
  readonly settle: Array<number>
  readonly many: Array<number>
  readonly cpu: Array<number>
  readonly backendPid: number
}

const open = async (label: string, upTo: string, extraFile?: string): Promise<Target> => {
  const db = `settle_sql_${label}_${suffix}`
  await pgSimpleQuery(databaseUrl, `CREATE DATABASE ${db}`)
  await pgSimpleQuery(databaseUrl, `ALTER DATABASE ${db} SET track_functions = 'pl'`)
  const chosen = Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= upTo))
  const runtime = ManagedRuntime.make(
    Layer.effectDiscard(Migrator.make({})({ loader: Migrator.fromRecord(chosen) })).pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(urlOf(db)), maxConnections: 1 }))
    )
  )
  const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => runtime.runPromise(effect as Effect.Effect<A, never, SqlClient.SqlClient>)
  await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO organisations (id, name) VALUES (${orgId}, 'bench settle sql')`
    yield* sql`INSERT INTO wallets (org_id, balance_micros) VALUES (${orgId}, 100000000000)`
    yield* sql`INSERT INTO receipt_signing_keys (kid, source, public_jwk, is_current) VALUES ('bench-kid', 'generated', '{}'::jsonb, true)`
  }))
  if (extraFile !== undefined) execFileSync("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", urlOf(db), "-f", extraFile], { stdio: "inherit" })
  // One connection (maxConnections 1), so one backend serves every statement of this database.
  const backendPid = await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return (yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`)[0]!.pid
  }))
  return { label, db, run, close: () => runtime.dispose(), heads: new Map(), wall: [], settle: [], many: [], cpu: [], backendPid }
}

let n = 0
/** One completed, idempotent call: the job the relay's settlement submits (layers/pg/Settlement.ts). */
const job = (): Job => benchCompletedCall(++n, orgId, `hold_${crypto.randomUUID().replaceAll("-", "")}`)

/** The statement exactly as layers/pg/ReceiptSealer.ts `write` sends it for a round with stored responses. */
const statement = (document: string, stored: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ r: unknown }>`
      WITH settled AS (SELECT relay_settle_many(${document}::jsonb) AS r),
      stored AS (
        INSERT INTO idempotency_records (${sql.literal(STORED_COLUMNS)})
        SELECT ${sql.literal(STORED_COLUMNS)}
        FROM jsonb_to_recordset(${stored}::jsonb) AS ${sql.literal(STORED_RECORDSET_IN_BATCH)}, settled
        WHERE (settled.r->x.batch->>'ok')::boolean
        ${sql.literal(STORED_UPSERT)}
      )
      SELECT r FROM settled`
    return rows[0]!.r
  })

const functionTimes = (t: Target) =>
  t.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT pg_stat_clear_snapshot()`
    const rows = yield* sql<{ funcname: string; calls: string; self_time: number; total_time: number }>`
      SELECT funcname, calls::text AS calls, self_time, total_time FROM pg_stat_user_functions
      WHERE funcname IN ('relay_settle', 'relay_settle_many')`
    const of = (name: string) => rows.find((r) => r.funcname === name) ?? { calls: "0", self_time: 0, total_time: 0 }
    return { settle: of("relay_settle"), many: of("relay_settle_many") }
  }))

/** The backend's CPU time (user + system, ms) from /proc: less disturbed by other processes than wall time. */
const backendCpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 1000 / CLOCK_TICKS
}
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())

const block = async (t: Target) => {
  const before = await functionTimes(t)
  const cpu0 = backendCpuMs(t.backendPid)
  let wall = 0
  for (let k = 0; k < callsPerBlock; k++) {
    const built = new TenantBatch(orgId, { iss: "https://bench.invalid", signer, nowMs: () => Date.now() }, (id) => t.heads.get(id) ?? { seq: 0, hash: GENESIS_PREV_HASH })
    const jobs = Array.from({ length: jobsPerBatch }, job)
    for (const j of jobs) await built.add(j)
    const document = JSON.stringify([built.document()])
    const stored = JSON.stringify(built.batch.idempotency.map((row) => ({ batch: 0, ...row })))
    const t0 = performance.now()
    const answer = await t.run(statement(document, stored)) as ReadonlyArray<{ ok: boolean }> | string
    wall += performance.now() - t0
    const parsed = typeof answer === "string" ? JSON.parse(answer) : answer
    if (parsed[0]?.ok !== true) throw new Error(`${t.label}: batch refused: ${JSON.stringify(parsed)}`)
    for (const id of chainsOf(orgId, jobs[0]!)) t.heads.set(id, built.heads.get(id)!)
  }
  t.cpu.push((backendCpuMs(t.backendPid) - cpu0) / callsPerBlock)
  // PostgreSQL publishes a backend's function counters at most once a second, when it goes idle.
  await new Promise((r) => setTimeout(r, 1_100))
  const after = await functionTimes(t)
  const per = (a: { calls: string; self_time: number; total_time: number }, b: typeof a, key: "self_time" | "total_time") =>
    (a[key] - b[key]) / Math.max(1, Number(a.calls) - Number(b.calls))
  t.wall.push(wall / callsPerBlock)
  t.settle.push(per(after.settle, before.settle, "total_time"))
  t.many.push(per(after.many, before.many, "total_time"))
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const base = await open("base", baseUpTo)
const head = await open("head", names[names.length - 1]!, settings.headExtra)
try {
  process.stdout.write(`base: migrations up to ${baseUpTo} (backend pid ${base.backendPid}); head: up to ${names[names.length - 1]} (backend pid ${head.backendPid}); ${blocks} blocks of ${callsPerBlock} statements of ${jobsPerBatch} call(s) each, alternating; load ${loadavg().map((x) => x.toFixed(2)).join("/")}\n`)
  for (const t of [base, head]) await block(t) // warm: chains exist, plans cached
  for (const t of [base, head]) {
    t.wall.length = 0
    t.settle.length = 0
    t.many.length = 0
    t.cpu.length = 0
  }
  for (let b = 0; b < blocks; b++) {
    for (const t of b % 2 === 0 ? [base, head] : [head, base]) await block(t)
  }
  const row = (what: string, key: "settle" | "many" | "wall" | "cpu") => {
    const a = median(base[key])
    const h = median(head[key])
    process.stdout.write(`${what.padEnd(52)} base ${a.toFixed(3)} ms   head ${h.toFixed(3)} ms   head/base ${(h / a).toFixed(2)}\n`)
  }
  row("relay_settle, PostgreSQL's own time per call", "settle")
  row("relay_settle_many (relay_settle included)", "many")
  row("the statement's round trip (client, durable commit)", "wall")
  row("the backend's CPU per call (the whole statement)", "cpu")
  process.stdout.write(`load ${loadavg().map((x) => x.toFixed(2)).join("/")}\n`)
} finally {
  await base.close()
  await head.close()
  if (!settings.keep) {
    for (const t of [base, head]) await pgSimpleQuery(databaseUrl, `DROP DATABASE IF EXISTS ${t.db} WITH (FORCE)`)
  }
}
