import { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, type Scope, Semaphore, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, SqlError, type SqlConnection } from "effect/sql"
import { mkdirSync } from "node:fs"
import { collectGarbageNow } from "./fullGarbageCollection.ts"
import { keepWasmOnBaselineCompiler } from "./wasmBaselineOnly.ts"

/**
 * Embedded PostgreSQL (PGlite, real Postgres in WASM) behind the same SqlClient the pg driver provides,
 * so one set of migrations and queries serves both. No published Effect driver for PGlite works with
 * effect 4.1 (docs/deployment.md), hence this small adapter.
 *
 * PGlite is a single session: every statement is serialised, and a transaction holds the lock throughout.
 */
/**
 * PostgreSQL's buffer pool inside PGlite's WASM memory. The default 128MB was filled by the gateway's own working set
 * and WASM memory never shrinks; 16MB keeps the hot pages of the tables the relay path touches, and a page outside it
 * is one read from the operating system's file cache. Measured (PGlite 0.5.14, 9,000 statements on an existing data
 * directory): peak RSS 344 -> 195-207 MiB, no slower (4.2-7.0 s vs 4.5-8.9 s on a shared machine).
 */
const PGLITE_SHARED_BUFFERS = "16MB"

const sqlError = (cause: unknown, operation: string) =>
  new SqlError.SqlError({ reason: new SqlError.UnknownError({ cause, operation }) })

const makeConnection = (db: PGlite): SqlConnection.Connection => {
  const rows = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () =>
        params.length === 0
          ? db.exec(sql).then((r) => r.at(-1)?.rows ?? [])
          : db.query<any>(sql, [...params]).then((r) => r.rows),
      catch: (cause) => sqlError(cause, "execute")
    })
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      try: () =>
        db.query<any>(sql, [...params], { rowMode: "array" }).then((r) => r.rows as ReadonlyArray<ReadonlyArray<unknown>>),
      catch: (cause) => sqlError(cause, "values")
    })
  const execute = (sql: string, params: ReadonlyArray<unknown>, transform?: (rows: ReadonlyArray<any>) => ReadonlyArray<any>) =>
    transform ? Effect.map(rows(sql, params), transform) : rows(sql, params)
  return {
    execute,
    executeUnprepared: execute,
    executeValues: values,
    executeValuesUnprepared: values,
    executeRaw: (sql, params) => Effect.tryPromise({ try: () => db.query(sql, [...params]), catch: (c) => sqlError(c, "raw") }),
    executeStream: (sql, params, transform) => Stream.fromArrayEffect(execute(sql, params, transform))
  }
}

/**
 * LISTEN for embedded PGlite, where there is no second connection to listen on: `listen` runs LISTEN in the one
 * session (serialised with every other statement) and calls `onPayload` for each notification on `channel` once
 * its transaction commits, until the scope closes.
 */
export class PgliteNotifications extends Context.Service<PgliteNotifications, {
  readonly listen: (channel: string, onPayload: (payload: string) => void) => Effect.Effect<void, SqlError.SqlError, Scope.Scope>
}>()("privacy-relay/PgliteNotifications") {}

/** `dataDir` undefined keeps the database in memory (tests). Provides the SqlClient and PgliteNotifications. */
export const layerPglite = (dataDir: string | undefined) =>
  Layer.effectContext(
    Effect.gen(function*() {
      const db = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => {
            // PGlite creates only the last directory of the path; a fresh DATA_DIR needs its parents too.
            if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true, mode: 0o700 })
            keepWasmOnBaselineCompiler()
            return PGlite.create(dataDir === undefined ? undefined : dataDir, {
              // Both the server (every start, so existing data directories too) and a first start's initdb.
              startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
              initDbStartParams: ["--set", `shared_buffers=${PGLITE_SHARED_BUFFERS}`]
            }).then((db) => {
              collectGarbageNow()
              return db
            })
          },
          catch: (cause) => sqlError(cause, "open")
        }),
        (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
      )
      const connection = makeConnection(db)
      const lock = Semaphore.makeUnsafe(1)
      const client = yield* SqlClient.make({
        driver: "pglite",
        compiler: PgClient.makeCompiler(),
        spanAttributes: [["db.system.name", "postgresql"]],
        acquirer: lock.withPermits(1)(Effect.succeed(connection)),
        transactionAcquirer: Effect.gen(function*() {
          yield* lock.take(1)
          yield* Effect.addFinalizer(() => lock.release(1))
          return connection
        })
      })
      const notifications = PgliteNotifications.of({
        listen: (channel, onPayload) =>
          Effect.gen(function*() {
            if (!/^[a-z_][a-z0-9_]*$/.test(channel)) return yield* Effect.die(new Error(`not a channel name: ${channel}`))
            yield* Effect.acquireRelease(
              Effect.sync(() => db.onNotification((ch, payload) => ch === channel && onPayload(payload))),
              (off) => Effect.sync(off)
            )
            yield* Effect.acquireRelease(client.unsafe(`LISTEN ${channel}`), () => client.unsafe(`UNLISTEN ${channel}`).pipe(Effect.ignore))
          })
      })
      return Context.make(SqlClient.SqlClient, client).pipe(Context.add(PgliteNotifications, notifications))
    })
  ).pipe(Layer.provide(Reactivity.layer))
