import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { SlotsMemory } from "../../../layers/memory/Slots.ts"
import { DatabaseLive } from "../../../layers/pg/Database.ts"
import { findRecords, IdempotencyPg } from "../../../layers/pg/Idempotency.ts"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../../services/AppConfig.ts"
import { Idempotency } from "../../../services/Idempotency.ts"
import { createTestStorage } from "../../support/databases.ts"

// The record store on the suite's database (fresh PostgreSQL database, or in-memory PGlite); the in-flight slot
// in memory, whose expiry follows the TestClock like the records do.
const withIdempotency = <A, E>(use: Effect.Effect<A, E, Idempotency>) =>
  Effect.gen(function*() {
    const storage = yield* Effect.promise(createTestStorage)
    const layer = IdempotencyPg.pipe(
      Layer.provide(SlotsMemory),
      Layer.provide(DatabaseLive),
      Layer.provide(AppConfig.fromEnv({ ...storage.env, LOG_LEVEL: "error" }))
    )
    return yield* use.pipe(Effect.provide(layer), Effect.ensuring(Effect.promise(storage.drop)))
  })

const response = { status: 200, headers: { "content-type": "application/json" }, body: new TextEncoder().encode("{}"), streamed: false }

describe("idempotency records expire after 24 hours (TestClock)", () => {
  it.effect("within 24 h a different body conflicts; after 24 h the same key is fresh again", () =>
    withIdempotency(Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const first = yield* idempotency.admit({ scope: "org|chat.completions", key: "k1", bodyHash: "a" })
      assert.strictEqual(first._tag, "Fresh")
      if (first._tag === "Fresh") yield* first.complete(response)

      yield* TestClock.adjust("23 hours")
      const replay = yield* idempotency.admit({ scope: "org|chat.completions", key: "k1", bodyHash: "a" })
      assert.strictEqual(replay._tag, "Replay")
      const conflict = yield* Effect.flip(idempotency.admit({ scope: "org|chat.completions", key: "k1", bodyHash: "b" }))
      assert.strictEqual(conflict._tag, "IdempotencyKeyConflict")

      yield* TestClock.adjust("1 hour")
      const fresh = yield* idempotency.admit({ scope: "org|chat.completions", key: "k1", bodyHash: "b" })
      assert.strictEqual(fresh._tag, "Fresh")
      if (fresh._tag === "Fresh") yield* fresh.complete({ ...response, body: new TextEncoder().encode("{\"second\":true}") })
      const second = yield* idempotency.admit({ scope: "org|chat.completions", key: "k1", bodyHash: "b" })
      assert.strictEqual(second._tag, "Replay")
      if (second._tag === "Replay") assert.strictEqual(new TextDecoder().decode(second.response.body), "{\"second\":true}")
    })), 60_000)

  it.effect("keys are scoped: the same key in another scope is independent", () =>
    withIdempotency(Effect.gen(function*() {
      const idempotency = yield* Idempotency
      const a = yield* idempotency.admit({ scope: "org-a|messages", key: "shared", bodyHash: "x" })
      if (a._tag === "Fresh") yield* a.complete(response)
      const b = yield* idempotency.admit({ scope: "org-b|messages", key: "shared", bodyHash: "y" })
      assert.strictEqual(b._tag, "Fresh")
      if (b._tag === "Fresh") yield* b.abandon
    })), 60_000)
})

describe("an idempotency look-up is a primary-key probe, however many records are stored", () => {
  it.effect("the plan for 20,000 stored records (analysed) reads the primary key, never the whole table, for one key or a batch", () =>
    Effect.gen(function*() {
      const storage = yield* Effect.promise(createTestStorage)
      const layer = DatabaseLive.pipe(Layer.provide(AppConfig.fromEnv({ ...storage.env, LOG_LEVEL: "error" })))
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`INSERT INTO idempotency_records (scope, idempotency_key, body_hash, status, headers, body_base64, streamed, expires_at)
          SELECT 'org|chat.completions', md5(i::text), 'h', 200, '{}'::jsonb, repeat('x', 2000), false, now() + interval '1 day'
          FROM generate_series(1, 20000) i`)
        yield* sql.unsafe("ANALYZE idempotency_records")
        const present = { scope: "org|chat.completions", key: "c4ca4238a0b923820dcc509a6f75849b", now: Date.now() }
        const absent = { scope: "org|chat.completions", key: "not-stored", now: Date.now() }
        // A look-up of one key (its own statement) and a batch of several (one JSON document): both probe the key.
        for (const items of [[present], [present, absent]]) {
          const [text, params] = findRecords(sql, items).compile()
          const plan = yield* sql.unsafe<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${text}`, params)
          const planText = JSON.stringify(plan)
          assert.include(planText, "idempotency_records_pkey")
          assert.notInclude(planText, "Seq Scan")
          // and it finds what is there, and only that
          const found = yield* findRecords(sql, items)
          assert.deepStrictEqual(found.map((r) => r.idempotency_key), [present.key])
          assert.strictEqual(found[0]!.body_hash, "h")
        }
        // An expired record is not found by either form.
        const later = { ...present, now: Date.now() + 2 * 24 * 3600_000 }
        assert.strictEqual((yield* findRecords(sql, [later])).length, 0)
        assert.strictEqual((yield* findRecords(sql, [later, absent])).length, 0)
      }).pipe(Effect.provide(layer), Effect.ensuring(Effect.promise(storage.drop)))
    }), 120_000)
})

