import { Data, Effect, Layer, References } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { KeyEncryption } from "../../services/KeyEncryption.ts"
import { KeyEncryptionLive } from "../KeyEncryptionLive.ts"
import { isSealed, keyContext, payloadContext } from "../oidc/atRest.ts"
import { byokContext } from "./Byok.ts"
import { DatabaseLive } from "./Database.ts"
import { jsonColumn } from "./jsonColumn.ts"
import { receiptKeyContext } from "./ReceiptKeys.ts"
import { ssoSecretContext } from "./SsoConnections.ts"
import { secretContext } from "./Webhooks.ts"

/**
 * `cli.ts kek rotate` (docs/deployment.md, "Rotating the KEK"): every value sealed under the previous KEK
 * (KEK_PREVIOUS_FILE) is opened and sealed again under the current one (KEK_FILE).
 *
 * - Refuses before writing anything when KEK_PREVIOUS_FILE is not set, or when any stored value opens under neither
 *   key (a wrong previous file, a value from another deployment): a first pass opens every value, the second writes.
 * - Idempotent and resumable: a value that already opens under the current KEK is left alone, so a second run (or a
 *   run after an interrupted one) writes nothing it need not.
 * - Safe while nodes serve: rows are read in batches in primary-key order and each is rewritten only if it still
 *   holds the envelope that was read (compare-and-set); a row a node changed or deleted meanwhile is counted, not
 *   overwritten (nodes with both files seal under the current KEK already).
 * Nothing secret is printed: progress and errors name tables, primary keys and KEK ids (one-way fingerprints).
 */

/** One column that holds sealed values, and what each value is bound to (the AES-GCM context its writer used). */
interface SealedColumn {
  readonly table: string
  readonly column: string
  /** The primary key: rows are read in this order (keyset pagination) and updated by it. */
  readonly key: ReadonlyArray<string>
  /** Other columns the context needs. */
  readonly extra?: ReadonlyArray<string>
  /** jsonb `{"sealed": envelope}` (the OpenID provider's rows; plain JSON rows from before sealing are skipped). */
  readonly json: boolean
  readonly context: (row: Readonly<Record<string, string>>) => string
}

/** Every place a sealed value is stored. A new one belongs here too (test/layers/pg/KekRotation.test.ts checks the list). */
export const SEALED_COLUMNS: ReadonlyArray<SealedColumn> = [
  { table: "receipt_signing_keys", column: "private_key_enc", key: ["kid"], json: false, context: (r) => receiptKeyContext(r.kid!) },
  {
    table: "webhook_endpoints",
    column: "secret_envelope",
    key: ["id"],
    extra: ["org_id"],
    json: false,
    context: (r) => secretContext(r.org_id!)
  },
  {
    table: "byok_credentials",
    column: "ciphertext",
    key: ["org_id", "provider"],
    json: false,
    context: (r) => byokContext(r.org_id!, r.provider!)
  },
  { table: "sso_connections", column: "oidc_client_secret_enc", key: ["org_id"], json: false, context: (r) => ssoSecretContext(r.org_id!) },
  { table: "oidc_signing_keys", column: "private_jwk", key: ["kid"], json: true, context: (r) => keyContext(r.kid!) },
  { table: "oidc_payloads", column: "payload", key: ["model", "id"], json: true, context: (r) => payloadContext(r.model!, r.id!) }
]

/** Refused: `reason` is the stable code the CLI prints (docs/errors.md, "Operator CLI"). */
export class KekRotationRefused extends Data.TaggedError("KekRotationRefused")<{
  readonly reason: "kek_previous_missing" | "kek_unreadable"
  readonly message: string
  readonly details?: Readonly<Record<string, unknown>>
}> {}

export interface TableCounts {
  /** Sealed values in the table when it was read. */
  readonly values: number
  /** Already sealed under the current KEK: left alone. */
  readonly already_current: number
  /** Opened under the previous KEK and sealed again under the current one. */
  readonly rewritten: number
  /** Changed or deleted by a node between read and write: left as the node wrote it. */
  readonly changed_meanwhile: number
}

export interface KekRotationProgress {
  readonly phase: "check" | "rewrite"
  readonly table: string
  /** Values of the table seen so far in this phase. */
  readonly seen: number
  readonly rewritten: number
}

const DEFAULT_BATCH = 200
/** Rows named in the refusal: enough to find them, few enough to read. */
const MAX_EXAMPLES = 5

interface StoredValue {
  readonly row: Readonly<Record<string, string>>
  readonly envelope: string
}

/** The sealed values of one column, a batch at a time, in primary-key order. */
const forEachBatch = <E, R>(
  sql: SqlClient.SqlClient,
  c: SealedColumn,
  batchSize: number,
  use: (batch: ReadonlyArray<StoredValue>) => Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    // Identifiers come from SEALED_COLUMNS (constants), never from input.
    const keyList = sql.literal(c.key.join(", "))
    const columns = sql.literal([...c.key, ...(c.extra ?? [])].map((k) => `${k}::text AS ${k}`).join(", "))
    const present = sql.literal(c.json ? `${c.column} ? 'sealed'` : `${c.column} IS NOT NULL`)
    let cursor: ReadonlyArray<string> | undefined
    while (true) {
      const after = cursor === undefined ? sql`true` : sql`(${keyList}) > ${sql.in(cursor)}`
      const rows = yield* sql<Record<string, unknown>>`
        SELECT ${columns}, ${sql.literal(c.column)} AS sealed_value FROM ${sql.literal(c.table)}
        WHERE ${present} AND ${after} ORDER BY ${keyList} LIMIT ${batchSize}`
      if (rows.length === 0) return
      const batch: Array<StoredValue> = []
      for (const raw of rows) {
        const row = raw as Record<string, string>
        const stored = c.json ? jsonColumn<unknown>(raw.sealed_value) : raw.sealed_value
        const envelope = c.json ? (isSealed(stored) ? stored.sealed : undefined) : (stored as string)
        if (envelope !== undefined) batch.push({ row, envelope })
      }
      yield* use(batch)
      const last = rows[rows.length - 1] as Record<string, string>
      cursor = c.key.map((k) => last[k]!)
      if (rows.length < batchSize) return
    }
  })

const rowName = (c: SealedColumn, row: Readonly<Record<string, string>>) => `${c.table}(${c.key.map((k) => row[k]).join(", ")})`

const unreadableError = (
  previous: string,
  current: string,
  counts: Record<string, number>,
  examples: ReadonlyArray<string>,
  /** Found by the check (nothing written yet), or by the rewrite (a value stored after the check). */
  found: "check" | "rewrite"
) =>
  new KekRotationRefused({
    reason: "kek_unreadable",
    message: `${Object.values(counts).reduce((a, b) => a + b, 0)} stored value(s) open under neither the current KEK (${current}) ` +
      `nor KEK_PREVIOUS_FILE's (${previous}): is KEK_PREVIOUS_FILE the key these values were sealed under? ` +
      (found === "check"
        ? "Nothing was changed."
        : "It was stored after the check; values before it were re-sealed, run again once it is fixed."),
    details: { unreadable: counts, examples }
  })

export const rotateKek = (options: { readonly batchSize?: number; readonly onProgress?: (progress: KekRotationProgress) => void } = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* KeyEncryption
    const batchSize = options.batchSize ?? DEFAULT_BATCH
    const report = options.onProgress ?? (() => {})
    const { current, previous } = keys.kekIds
    if (previous === undefined) {
      return yield* new KekRotationRefused({
        reason: "kek_previous_missing",
        message: "KEK_PREVIOUS_FILE is not set: give it the file of the KEK being replaced (and KEK_FILE the new one). Nothing was changed."
      })
    }

    // Pass 1: every value opens under one of the two keys, or nothing is written.
    const unreadable: Record<string, number> = {}
    const examples: Array<string> = []
    for (const c of SEALED_COLUMNS) {
      let seen = 0
      yield* forEachBatch(sql, c, batchSize, (batch) =>
        Effect.gen(function*() {
          for (const { row, envelope } of batch) {
            const opened = yield* Effect.option(keys.openTagged(envelope, c.context(row)))
            if (opened._tag === "None") {
              unreadable[c.table] = (unreadable[c.table] ?? 0) + 1
              if (examples.length < MAX_EXAMPLES) examples.push(rowName(c, row))
            }
          }
          seen += batch.length
          report({ phase: "check", table: c.table, seen, rewritten: 0 })
        }))
    }
    if (Object.keys(unreadable).length > 0) return yield* unreadableError(previous, current, unreadable, examples, "check")

    // Pass 2: seal again what the previous key opened; a batch per transaction.
    const tables: Record<string, TableCounts> = {}
    for (const c of SEALED_COLUMNS) {
      const counts = { values: 0, already_current: 0, rewritten: 0, changed_meanwhile: 0 }
      yield* forEachBatch(sql, c, batchSize, (batch) =>
        sql.withTransaction(Effect.gen(function*() {
          for (const { row, envelope } of batch) {
            counts.values++
            const context = c.context(row)
            const opened = yield* keys.openTagged(envelope, context).pipe(
              Effect.mapError(() => unreadableError(previous, current, { [c.table]: 1 }, [rowName(c, row)], "rewrite"))
            )
            if (opened.underCurrent) {
              counts.already_current++
              continue
            }
            const resealed = yield* keys.seal(opened.plaintext, context)
            const where = sql.and(c.key.map((k) => sql`${sql.literal(k)}::text = ${row[k]!}`))
            const updated = c.json
              ? yield* sql`UPDATE ${sql.literal(c.table)} SET ${sql.literal(c.column)} = ${JSON.stringify({ sealed: resealed })}::jsonb
                  WHERE ${where} AND ${sql.literal(c.column)}->>'sealed' = ${envelope} RETURNING 1 AS one`
              : yield* sql`UPDATE ${sql.literal(c.table)} SET ${sql.literal(c.column)} = ${resealed}
                  WHERE ${where} AND ${sql.literal(c.column)} = ${envelope} RETURNING 1 AS one`
            if (updated.length > 0) counts.rewritten++
            else counts.changed_meanwhile++
          }
        })).pipe(Effect.tap(() => Effect.sync(() => report({ phase: "rewrite", table: c.table, seen: counts.values, rewritten: counts.rewritten })))))
      tables[c.table] = counts
    }
    return {
      kek: current,
      previous_kek: previous,
      tables,
      rewritten: Object.values(tables).reduce((sum, t) => sum + t.rewritten, 0)
    }
  }).pipe(Effect.catchTag("SqlError", Effect.die))

/**
 * What the rotation runs on: the database and the KEKs only. Not the gateway's services: several open sealed values
 * when they start (the receipt key, the OpenID provider's keys), so with a wrong or missing KEK_PREVIOUS_FILE they
 * would die before the rotation could say what is wrong.
 */
export const kekRotationLayer = (env: Readonly<Record<string, string | undefined>>) =>
  Layer.mergeAll(DatabaseLive, KeyEncryptionLive).pipe(
    Layer.provideMerge(LOG_LEVEL_LIVE),
    Layer.provideMerge(AppConfig.fromEnv(env))
  )

/** LOG_LEVEL as the gateway applies it (the CLI runs with `error`, so stdout stays its one JSON answer). */
const LOG_LEVEL_LIVE = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) =>
    Layer.succeed(References.MinimumLogLevel, ({ debug: "Debug", info: "Info", warn: "Warn", error: "Error" } as const)[config.logLevel]))
)
