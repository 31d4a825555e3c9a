/** The settings of `node bench/settleStatement.ts`; docs/benchmark.md is tested against them. */
import { custom, nonEmpty, numberIn, onOff, text } from "../../sdks/typescript/src/wire/config/setting.ts"
import { migrations } from "../../migrations/index.ts"

const MIGRATIONS = Object.keys(migrations)

export const SETTLE_STATEMENT_SETTINGS = {
  /** The server both databases are created on (the URL's own database only serves CREATE and DROP DATABASE). */
  databaseUrl: custom("DATABASE_URL", "a postgres:// or postgresql:// URL", "unset (required)", (raw, fail) => {
    const value = nonEmpty(raw)
    if (value === undefined) return fail()
    try {
      return ["postgres:", "postgresql:"].includes(new URL(value).protocol) ? value : fail(raw)
    } catch {
      return fail(raw)
    }
  }),
  blocks: numberIn("BENCH_SQL_BLOCKS", { fallback: 10, min: 1 }),
  /** Statements per block. */
  calls: numberIn("BENCH_SQL_CALLS", { fallback: 300, min: 1 }),
  /** Calls in each statement's batch: 1 is a call at c=1; the sealer batches a busy tenant's calls up to 128. */
  jobs: numberIn("BENCH_SQL_JOBS", { fallback: 1, min: 1, max: 128 }),
  /** The "base" database is migrated up to this migration, the "head" one fully. */
  baseUpTo: custom("BENCH_SQL_BASE_UPTO", "the name of a migration in migrations/index.ts, such as 0023_scim", "the one before the newest", (raw, fail) => {
    const value = nonEmpty(raw)
    if (value === undefined) return MIGRATIONS[MIGRATIONS.length - 2]!
    return MIGRATIONS.includes(value) ? value : fail(raw)
  }),
  /** A file of SQL that psql runs on the head database after its migrations: a change tried before its migration. */
  headExtra: text("BENCH_SQL_HEAD_EXTRA", "none"),
  keep: onOff("BENCH_SQL_KEEP", false)
}
