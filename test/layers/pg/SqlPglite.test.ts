import { mkdtempSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { layerPglite } from "../../../layers/pg/SqlPglite.ts"

describe("embedded PGlite", () => {
  it("creates a fresh, nested data directory (a newcomer's first start) and keeps data across reopenings", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "pr-pglite-")), "not", "yet", "there")
    const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
      Effect.runPromise(effect.pipe(Effect.provide(layerPglite(dir)), Effect.scoped) as Effect.Effect<A>)
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE t (n int)`
      yield* sql`INSERT INTO t VALUES (42)`
    }))
    expect(statSync(dir).isDirectory()).toBe(true)
    const rows = await run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql<{ n: number }>`SELECT n FROM t`))
    expect(rows).toEqual([{ n: 42 }])
  }, 120_000)
})
