import { Clock, Deferred, Duration, Effect, Exit, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import {
  type Admission,
  IDEMPOTENCY_WAIT_MS,
  Idempotency,
  IdempotencyInFlight,
  IdempotencyKeyConflict,
  idempotencySlotKey,
  invalidIdempotencyKey,
  type StoredResponse
} from "../../services/Idempotency.ts"
import { Slots } from "../../services/Slots.ts"
import { makeKeyedBatcher } from "../KeyedBatcher.ts"
import { STORED_COLUMNS, STORED_RECORDSET, STORED_UPSERT, storedRow, type StoredRow } from "./idempotencyRecords.ts"

/**
 * The in-flight slot expires this long after its owner last renewed it. The owner renews it every SLOT_RENEW_MS for
 * as long as the original runs (up to SLOT_MAX_HOLD_MS); a node that died (SIGKILL, crash) stops renewing, so a client's
 * retry on another node waits at most this long (409 idempotency_in_flight, Retry-After 1) before it may run afresh.
 */
const SLOT_TTL_MS = 15_000
const SLOT_RENEW_MS = 5_000
/** No relay call runs this long (provider timeouts are shorter): the renewals stop there. */
const SLOT_MAX_HOLD_MS = 10 * 60_000
const POLL_MS = 50

interface Row {
  readonly body_hash: string
  readonly status: number
  readonly headers: Record<string, string>
  readonly body_base64: string
  readonly streamed: boolean
}

/**
 * The stored records of these (scope, key) pairs that have not expired at each item's `now`. One primary-key probe
 * per pair, whatever the table's size. A batch of one (every look-up at c=1, most at c=16) is a plain `WHERE` on the
 * primary key: no JSON document for the gateway to build and PostgreSQL to parse (issue 41). A larger batch reads its
 * pairs from one JSON document; its LATERAL subquery is fenced (OFFSET 0) so the planner cannot flatten it into a hash
 * join, which it otherwise picks for the function's fixed 100-row estimate, scanning the whole 24 h of records on every
 * call (measured: 3 ms at 20k records, growing with the table).
 */
export const findRecords = (
  sql: SqlClient.SqlClient,
  items: ReadonlyArray<{ readonly scope: string; readonly key: string; readonly now: number }>
) =>
  items.length === 1
    ? sql<Row & { scope: string; idempotency_key: string }>`
      SELECT scope, idempotency_key, body_hash, status, headers, body_base64, streamed
      FROM idempotency_records
      WHERE scope = ${items[0]!.scope} AND idempotency_key = ${items[0]!.key} AND expires_at > ${new Date(items[0]!.now)}`
    : sql<Row & { scope: string; idempotency_key: string }>`
      SELECT r.scope, r.idempotency_key, r.body_hash, r.status, r.headers, r.body_base64, r.streamed
      FROM jsonb_to_recordset(${JSON.stringify(items.map((i) => ({ s: i.scope, k: i.key, now: new Date(i.now).toISOString() })))}::jsonb)
        AS x(s text, k text, now timestamptz)
      CROSS JOIN LATERAL (
        SELECT * FROM idempotency_records r
        WHERE r.scope = x.s AND r.idempotency_key = x.k AND r.expires_at > x.now
        OFFSET 0
      ) r`

export const IdempotencyPg = Layer.effect(
  Idempotency,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const slots = yield* Slots
    const layerScope = yield* Effect.scope
    /** Same-node duplicates wait on the original's Deferred instead of polling. */
    const local = new Map<string, Deferred.Deferred<void>>()

    // Look-ups and writes of concurrent requests are coalesced: one statement per batch, not per request. Each item
    // carries its own clock reading, so expiry follows the caller's Clock.
    const { submit: findBatched } = yield* makeKeyedBatcher<{ scope: string; key: string; now: number }, Row | undefined>({
      maxBatch: 256,
      run: (_, items) =>
        findRecords(sql, items).pipe(
          Effect.map((rows) =>
            items.map((i) => Exit.succeed(rows.find((r) => r.scope === i.scope && r.idempotency_key === i.key)))
          ),
          Effect.orDie
        )
    })
    const find = (scope: string, key: string, now: number) => findBatched("find", { scope, key, now })

    const { submit: storeBatched } = yield* makeKeyedBatcher<StoredRow, void>({
      maxBatch: 256,
      run: (_, rows) =>
        sql`
          INSERT INTO idempotency_records (${sql.literal(STORED_COLUMNS)})
          SELECT ${sql.literal(STORED_COLUMNS)} FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS ${sql.literal(STORED_RECORDSET)}
          ${sql.literal(STORED_UPSERT)}`.pipe(
          Effect.map(() => rows.map(() => Exit.void)),
          Effect.orDie
        )
    })

    const toStored = (row: Row): StoredResponse => ({
      status: row.status,
      headers: row.headers,
      body: Buffer.from(row.body_base64, "base64"),
      streamed: row.streamed
    })

    const judge = (row: Row, bodyHash: string) =>
      row.body_hash === bodyHash ? Effect.succeed<Admission>({ _tag: "Replay", response: toStored(row) }) : Effect.fail(new IdempotencyKeyConflict())

    const admit = ({ scope, key, bodyHash }: { scope: string; key: string; bodyHash: string }) =>
      Effect.gen(function*() {
        const invalid = invalidIdempotencyKey(key)
        if (invalid !== undefined) return yield* invalid
        const slotKey = idempotencySlotKey(scope, key)
        const deadline = (yield* Clock.currentTimeMillis) + IDEMPOTENCY_WAIT_MS
        for (;;) {
          const now = yield* Clock.currentTimeMillis
          // The slot first, then the record: a fresh key (the common case) costs one slot and one look-up. Whoever
          // holds the slot is the only one who may write the record, so a record found while holding it is final.
          const owner = crypto.randomUUID()
          if (yield* slots.acquire(slotKey, owner, SLOT_TTL_MS)) {
            const completed = yield* find(scope, key, now)
            if (completed !== undefined) {
              yield* slots.release(slotKey, owner)
              return yield* judge(completed, bodyHash)
            }
            const done = yield* Deferred.make<void>()
            local.set(slotKey, done)
            // Keeps the slot while this node runs the original; a failed renewal is tried again at the next tick.
            // Bounded, as the old fixed expiry was: an admission never finished (a bug) cannot hold its key for ever.
            const heartbeat = yield* Effect.gen(function*() {
              for (let renewed = 0; renewed * SLOT_RENEW_MS < SLOT_MAX_HOLD_MS; renewed++) {
                yield* Effect.sleep(Duration.millis(SLOT_RENEW_MS))
                yield* slots.renew(slotKey, owner, SLOT_TTL_MS).pipe(Effect.catchCause(() => Effect.void))
              }
            }).pipe(Effect.forkIn(layerScope))
            const finish = Effect.suspend(() => {
              if (local.get(slotKey) === done) local.delete(slotKey)
              return Fiber.interrupt(heartbeat).pipe(
                Effect.andThen(slots.release(slotKey, owner)),
                Effect.andThen(Deferred.succeed(done, undefined)),
                Effect.asVoid
              )
            })
            const admission: Admission = {
              _tag: "Fresh",
              complete: (response) =>
                Effect.gen(function*() {
                  const at = yield* Clock.currentTimeMillis
                  yield* storeBatched("store", storedRow({ scope, key, bodyHash }, response, at))
                }).pipe(
                  Effect.ensuring(finish),
                  Effect.catchCause((cause) => Effect.logError("storing an idempotent response failed; the key stays fresh", cause)),
                  // In the layer's scope and uninterruptible: closing the layer (shutdown) waits for the write.
                  Effect.uninterruptible,
                  Effect.forkIn(layerScope),
                  Effect.asVoid
                ),
              abandon: finish
            }
            return admission
          }

          // Someone holds the slot: the original is in flight (here or on another node), or has just finished.
          const existing = yield* find(scope, key, now)
          if (existing !== undefined) return yield* judge(existing, bodyHash)
          const remaining = deadline - now
          if (remaining <= 0) return yield* new IdempotencyInFlight()
          const waiting = local.get(slotKey)
          if (waiting !== undefined) {
            yield* Deferred.await(waiting).pipe(Effect.timeoutOption(Duration.millis(remaining)))
          } else {
            yield* Effect.sleep(Duration.millis(Math.min(POLL_MS, remaining)))
          }
        }
      })

    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      yield* sql`DELETE FROM idempotency_records WHERE expires_at <= ${new Date(now)}`
    }).pipe(Effect.catchCause((cause) => Effect.logError("idempotency sweep failed", cause)))
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced("10 minutes")))

    return Idempotency.of({
      admit,
      find: ({ scope, key, bodyHash }) =>
        Effect.gen(function*() {
          const row = yield* find(scope, key, yield* Clock.currentTimeMillis)
          if (row === undefined) return undefined
          if (row.body_hash !== bodyHash) return yield* new IdempotencyKeyConflict()
          return toStored(row)
        })
    })
  })
)
