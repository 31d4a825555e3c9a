/**
 * Where the benchmarked gateway keeps its state. With DATABASE_URL set: a fresh PostgreSQL database created for
 * the run and dropped after it; with REDIS_URL set: a unique REDIS_PREFIX whose keys are deleted after. Without
 * them: embedded PGlite in a temporary DATA_DIR and in-process shared state. The gateway always gets a DATA_DIR
 * (PGlite needs it; with Postgres it stays empty).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Redis } from "ioredis"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface BenchStorage {
  readonly env: Record<string, string>
  readonly dataDir: string
  readonly sql: "postgres" | "pglite"
  readonly shared: "redis" | "memory"
  /** the run's own database URL (Postgres only) */
  readonly databaseUrl: string | undefined
  /**
   * PostgreSQL only: cumulative work of the run's database so far (the settlement function's server time and call
   * count, committed transactions). PostgreSQL publishes backend statistics about once a second, so a reading taken
   * right after a phase may miss its last second: callers wait before reading.
   */
  readonly statementCounters: (() => Promise<StatementCounters>) | undefined
  readonly drop: () => Promise<void>
}

export interface StatementCounters {
  /** calls of relay_settle (one per settlement batch) */
  readonly settleCalls: number
  /** server time spent in relay_settle, ms */
  readonly settleMs: number
  readonly commits: number
}

const runStatement = <A extends object = never>(databaseUrl: string, statement: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.unsafe<A>(statement)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })), Effect.scoped)
  )

/** The URL without its password, for printing. */
export const redactUrl = (url: string): string => {
  const u = new URL(url)
  if (u.password !== "") u.password = "***"
  return u.toString()
}

export const createBenchStorage = async (env: Readonly<Record<string, string | undefined>>): Promise<BenchStorage> => {
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 12)
  const dataDir = mkdtempSync(join(tmpdir(), "relay-bench-"))
  const out: Record<string, string> = { DATA_DIR: dataDir }
  const cleanups: Array<() => Promise<void>> = [async () => rmSync(dataDir, { recursive: true, force: true })]
  let databaseUrl: string | undefined
  if (env.DATABASE_URL) {
    const name = `relay_bench_${suffix}`
    await runStatement(env.DATABASE_URL, `CREATE DATABASE ${name}`)
    // Time spent in PL/pgSQL functions (relay_settle) is then visible in pg_stat_user_functions.
    await runStatement(env.DATABASE_URL, `ALTER DATABASE ${name} SET track_functions = 'pl'`)
    const url = new URL(env.DATABASE_URL)
    url.pathname = `/${name}`
    databaseUrl = url.toString()
    out.DATABASE_URL = databaseUrl
    const maintenance = env.DATABASE_URL
    cleanups.push(async () => {
      await runStatement(maintenance, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    })
  }
  if (env.REDIS_URL) {
    const prefix = `relay_bench_${suffix}:`
    out.REDIS_URL = env.REDIS_URL
    out.REDIS_PREFIX = prefix
    const redisUrl = env.REDIS_URL
    cleanups.push(async () => {
      const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 })
      await redis.connect()
      try {
        let cursor = "0"
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000)
          if (keys.length > 0) await redis.del(...keys)
          cursor = next
        } while (cursor !== "0")
      } finally {
        await redis.quit()
      }
    })
  }
  return {
    env: out,
    dataDir,
    sql: databaseUrl ? "postgres" : "pglite",
    shared: env.REDIS_URL ? "redis" : "memory",
    databaseUrl,
    statementCounters: databaseUrl === undefined ? undefined : async () => {
      const rows = await runStatement<{ settle_calls: string; settle_ms: string; commits: string }>(databaseUrl, `
        SELECT coalesce((SELECT sum(calls) FROM pg_stat_user_functions WHERE funcname = 'relay_settle'), 0)::text AS settle_calls,
               coalesce((SELECT sum(total_time) FROM pg_stat_user_functions WHERE funcname = 'relay_settle'), 0)::text AS settle_ms,
               (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::text AS commits`)
      const row = rows[0]!
      return { settleCalls: Number(row.settle_calls), settleMs: Number(row.settle_ms), commits: Number(row.commits) }
    },
    drop: async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch((e) => console.error(`cleanup failed: ${String(e)}`))
    }
  }
}
