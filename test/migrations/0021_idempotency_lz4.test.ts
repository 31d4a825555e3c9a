// Migration 0021 makes PostgreSQL compress stored idempotent responses with lz4 (cheaper than pglz inside the
// settlement's statement); a server without lz4 (PGlite) keeps pglz and the migration still succeeds.
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { layerPglite } from "../../layers/pg/SqlPglite.ts"
import { migrations } from "../../migrations/index.ts"
import { createTestStorage } from "../support/databases.ts"

const migrate = (record: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>) =>
  Migrator.make({})({ loader: Migrator.fromRecord(record as any) })

describe("migration 0021: stored responses compressed with lz4", () => {
  it("uses lz4 for body_base64 where the server has it, and a large stored response reads back byte for byte", async () => {
    const storage = await createTestStorage()
    const client = storage.env.DATABASE_URL === undefined
      ? layerPglite(undefined)
      : PgClient.layer({ url: Redacted.make(storage.env.DATABASE_URL) })
    try {
      const result = await Effect.runPromise(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrate(migrations)
        // Whether this server was built with lz4: a column declared with it is refused otherwise.
        const lz4 = yield* sql`CREATE TEMPORARY TABLE lz4_probe (x text COMPRESSION lz4)`.pipe(
          Effect.as(true),
          Effect.catch(() => Effect.succeed(false))
        )
        const [column] = yield* sql<{ compression: string }>`
          SELECT attcompression::text AS compression FROM pg_attribute
          WHERE attrelid = 'idempotency_records'::regclass AND attname = 'body_base64'`
        // A streamed transcript's size (over the 2 KB at which a value is compressed), not repetitive only.
        const body = Buffer.from(Array.from({ length: 400 }, (_, i) => `data: {"seq":${i},"delta":"${(i * 7919).toString(36)}"}\n\n`).join("")).toString("base64")
        yield* sql`INSERT INTO idempotency_records ${sql.insert({
          scope: "org_a|responses", idempotency_key: "k1", body_hash: "h", status: 200, headers: "{}", body_base64: body,
          streamed: true, expires_at: new Date(Date.now() + 60_000)
        })}`
        const [row] = yield* sql<{ body_base64: string; used: string | null }>`
          SELECT body_base64, pg_column_compression(body_base64) AS used FROM idempotency_records WHERE idempotency_key = 'k1'`
        return { lz4, compression: column!.compression, stored: row!.body_base64 === body, used: row!.used, bytes: body.length }
      }).pipe(Effect.provide(client as Layer.Layer<SqlClient.SqlClient>), Effect.scoped) as Effect.Effect<any>)

      expect(result.bytes).toBeGreaterThan(8_000)
      expect(result.stored).toBe(true)
      if (result.lz4) {
        expect(result.compression).toBe("l")
        expect(result.used).toBe("lz4")
      } else {
        // No lz4: the column keeps the server's default (pglz).
        expect(result.compression).toBe("")
        expect(result.used).toBe("pglz")
      }
      // PostgreSQL in CI is Debian's, built with lz4: there the faster compression must be in use.
      if (storage.env.DATABASE_URL !== undefined) expect(result.lz4).toBe(true)
    } finally {
      await storage.drop()
    }
  }, 120_000)
})
