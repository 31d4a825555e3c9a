import { Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { isSqlError } from "effect/sql/SqlError"
import { readFileSync } from "node:fs"
import { RECEIPT_KEY_LOCK } from "../../migrations/0020_receipt_key_schedule.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { KeyEncryption } from "../../services/KeyEncryption.ts"
import {
  type CurrentReceiptKey,
  type ReceiptKeyRecord,
  ReceiptKeyFromFile,
  type ReceiptKeyRotation,
  ReceiptKeys,
  type RotationTrigger
} from "../../services/ReceiptKeys.ts"
import {
  exportPrivateJwk,
  exportPublicJwk,
  generateSigningKeyPair,
  importPublicJwk,
  isPublicJwk,
  jwkThumbprintKid,
  type PrivateJwk,
  type PublicJwk
} from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { nextPeriodStart, periodName, periodStartOf } from "../../src/receipts/rotationSchedule.ts"
import { toReceiptJwk } from "../../sdks/typescript/src/wire/receipts/jwks.ts"
import { nodeSignerFromPrivateJwk } from "../crypto/nodeEs256Signer.ts"

/** AES-GCM additional data: a stored private key opens only as the key of its own kid. */
export const receiptKeyContext = (kid: string) => `receipt-signing-key:${kid}`

interface KeyRow {
  readonly kid: string
  readonly public_jwk: PublicJwk
  readonly private_key_enc: string | null
}

/** A timestamptz column as Unix milliseconds (text, so no driver turns it into a Date or loses precision). */
const epochMs = (column: string) => `(extract(epoch from ${column}) * 1000)::float8::text`

/**
 * The private JWK is imported into a node:crypto KeyObject here, once per key load or rotation, so every
 * receipt signature is a synchronous node:crypto sign with no per-call import (see layers/crypto/nodeEs256Signer.ts).
 */
const toCurrent = (kid: string, publicJwk: PublicJwk, privateJwk: PrivateJwk): CurrentReceiptKey => ({
  kid,
  jwk: toReceiptJwk(publicJwk, kid),
  signer: nodeSignerFromPrivateJwk(kid, privateJwk)
})

/** RECEIPT_SIGNING_KEY_FILE: a private P-256 JWK (kty, crv, x, y, d). */
const readKeyFile = (path: string): PrivateJwk => {
  const parsed: unknown = JSON.parse(readFileSync(path, "utf8"))
  if (!isPublicJwk(parsed) || typeof (parsed as { d?: unknown }).d !== "string") {
    throw new Error("RECEIPT_SIGNING_KEY_FILE must hold a private EC P-256 JWK (kty, crv, x, y, d)")
  }
  const { kty, crv, x, y, d } = parsed as PrivateJwk
  return { kty, crv, x, y, d }
}

/**
 * Keys in `receipt_signing_keys` (docs/receipts.md, "Signing keys"). The current key's signer (a node:crypto
 * KeyObject) is cached, so signing never touches the database. The cache follows the stored current key: at every
 * boundary of the rotation schedule (each process runs the scheduled rotation then, and one of them makes the key),
 * every RECEIPT_KEYS_REFRESH_MS (default 60 s, for rotations made on demand elsewhere), and at once when a
 * settlement is refused because its key was rotated meanwhile (ReceiptSealer re-signs with `refresh`).
 *
 * Rotations take the exclusive advisory lock RECEIPT_KEY_LOCK (migrations/0020_receipt_key_schedule.ts); settlements
 * and `withCurrent` hold it shared while they check the key is current. The lock is taken only around rotations and
 * once per settlement statement (not per receipt), and never with any row lock held first, so it cannot deadlock.
 */
export const ReceiptKeysPg = Layer.effect(
  ReceiptKeys,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const encryption = yield* KeyEncryption
    const keyFile = config.settings.receiptSigningKeyFile
    const refreshMs = config.settings.receiptKeysRefreshMs
    const checkMs = config.settings.receiptKeyRotationCheckMs
    const schedule = config.settings.receiptKeyRotation
    /** The schedule in force: none when keys come from a file (rotation is then replacing the file). */
    const scheduled = keyFile === undefined && schedule.kind !== "off"

    const verifyKeys = new Map<string, Promise<CryptoKey>>()

    const lockExclusive = sql`SELECT pg_advisory_xact_lock(${sql.literal(String(RECEIPT_KEY_LOCK))})`
    const lockShared = sql`SELECT pg_advisory_xact_lock_shared(${sql.literal(String(RECEIPT_KEY_LOCK))})`
    const databaseNowMs = sql<{ now: string }>`SELECT ${sql.literal(epochMs("clock_timestamp()"))} AS now`.pipe(
      Effect.map((rows) => Number(rows[0]!.now))
    )

    const generateRow = Effect.gen(function*() {
      const pair = yield* Effect.promise(() => generateSigningKeyPair({ extractable: true }))
      const publicJwk = yield* Effect.promise(() => exportPublicJwk(pair.publicKey))
      const kid = yield* Effect.promise(() => jwkThumbprintKid(publicJwk))
      const privateJwk = yield* Effect.promise(() => exportPrivateJwk(pair.privateKey))
      const sealed = yield* encryption.seal(JSON.stringify(privateJwk), receiptKeyContext(kid))
      return { kid, public_jwk: publicJwk, private_key_enc: sealed } satisfies KeyRow
    })

    const openRow = (row: KeyRow) =>
      Effect.gen(function*() {
        if (row.private_key_enc === null) {
          return yield* Effect.die(
            new Error(`the current receipt key ${row.kid} comes from a key file: set RECEIPT_SIGNING_KEY_FILE on this process too`)
          )
        }
        const privateJwk = JSON.parse(yield* encryption.open(row.private_key_enc, receiptKeyContext(row.kid))) as PrivateJwk
        return yield* Effect.try({ try: () => toCurrent(row.kid, row.public_jwk, privateJwk), catch: (e) => e }).pipe(Effect.orDie)
      })

    const selectCurrent = sql<KeyRow>`
      SELECT kid, public_jwk, private_key_enc FROM receipt_signing_keys WHERE is_current`.pipe(Effect.orDie)

    const loadOrCreateCurrent = Effect.gen(function*() {
      const existing = yield* selectCurrent
      if (existing.length > 0) return yield* openRow(existing[0]!)
      const row = yield* generateRow
      // Two processes starting on an empty database: the one-current unique index lets exactly one insert win.
      yield* sql`INSERT INTO receipt_signing_keys ${
        sql.insert({ ...row, public_jwk: JSON.stringify(row.public_jwk), source: "generated", is_current: true, rotation_trigger: "initial" })
      } ON CONFLICT DO NOTHING`.pipe(Effect.orDie)
      const winner = yield* selectCurrent
      return yield* openRow(winner[0]!)
    })

    const loadFromFile = (path: string) =>
      Effect.gen(function*() {
        const privateJwk = yield* Effect.try({ try: () => readKeyFile(path), catch: (e) => e }).pipe(Effect.orDie)
        const publicJwk: PublicJwk = { kty: "EC", crv: "P-256", x: privateJwk.x, y: privateJwk.y }
        const kid = yield* Effect.promise(() => jwkThumbprintKid(publicJwk))
        // Import before publishing: a key file that does not hold a usable P-256 key must not become current.
        const key = yield* Effect.try({ try: () => toCurrent(kid, publicJwk, privateJwk), catch: (e) => e }).pipe(Effect.orDie)
        // Publish the file key (public part only) and make it current; earlier keys stay published (private parts
        // erased), under the rotation lock like any rotation.
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* lockExclusive
          yield* sql`INSERT INTO receipt_signing_keys ${
            sql.insert({ kid, public_jwk: JSON.stringify(publicJwk), private_key_enc: null, source: "file", is_current: false, rotation_trigger: "file" })
          } ON CONFLICT (kid) DO NOTHING`
          yield* sql`UPDATE receipt_signing_keys SET is_current = false, retired_at = clock_timestamp(), private_key_enc = NULL
            WHERE is_current AND kid <> ${kid}`
          yield* sql`UPDATE receipt_signing_keys SET is_current = true, retired_at = NULL, activated_at = clock_timestamp()
            WHERE kid = ${kid} AND NOT is_current`
        })).pipe(Effect.orDie)
        return key
      })

    let current: CurrentReceiptKey = keyFile !== undefined ? yield* loadFromFile(keyFile) : yield* loadOrCreateCurrent

    /** Follows the stored current key (a rotation elsewhere); the key current now. */
    const follow = (rows: ReadonlyArray<KeyRow>) =>
      Effect.gen(function*() {
        if (rows.length > 0 && rows[0]!.kid !== current.kid) current = yield* openRow(rows[0]!)
        return current
      })
    const refresh = Effect.flatMap(selectCurrent, follow)

    /**
     * Inside a transaction holding the exclusive lock: retires the current key (its private part erased), makes
     * `row` current and records `key.rotated` for every organisation with an active endpoint subscribed to it (the
     * dispatcher delivers it like any event; one event id per organisation).
     */
    const activate = (row: KeyRow, trigger: "schedule" | "manual", periodStart: number | undefined) =>
      Effect.gen(function*() {
        const previous = yield* sql<{ kid: string }>`SELECT kid FROM receipt_signing_keys WHERE is_current`
        yield* sql`UPDATE receipt_signing_keys SET is_current = false, retired_at = clock_timestamp(), private_key_enc = NULL
          WHERE is_current`
        const [inserted] = yield* sql<{ activated_at: string }>`
          INSERT INTO receipt_signing_keys (kid, public_jwk, private_key_enc, source, is_current, rotation_trigger, activated_at, period_start)
          VALUES (${row.kid}, ${JSON.stringify(row.public_jwk)}::jsonb, ${row.private_key_enc}, 'generated', true, ${trigger},
            clock_timestamp(), ${periodStart === undefined ? null : new Date(periodStart).toISOString()}::timestamptz)
          RETURNING ${sql.literal(epochMs("activated_at"))} AS activated_at`
        const rotation: ReceiptKeyRotation = {
          kid: row.kid,
          previous_kid: previous[0]?.kid ?? null,
          trigger,
          period: periodStart === undefined ? null : periodName(schedule, periodStart),
          activated_at: new Date(Number(inserted!.activated_at)).toISOString()
        }
        const data = {
          key_type: "receipt_signing",
          ...rotation,
          jwks_url: `${config.publicBaseUrl}/api/.well-known/service-receipt-pubkeys.jwks`
        }
        yield* sql`
          INSERT INTO outbox_events (id, org_id, event, data)
          SELECT gen_random_uuid()::text, e.org_id, 'key.rotated', ${JSON.stringify(data)}::jsonb
          FROM (SELECT DISTINCT org_id FROM webhook_endpoints
                WHERE status = 'active' AND events ?| array['*', 'key.*', 'key.rotated']) e`
        return rotation
      })

    const logRotation = (rotation: ReceiptKeyRotation) =>
      Effect.logInfo("receipt signing key rotated").pipe(
        Effect.annotateLogs({ kid: rotation.kid, previous_kid: rotation.previous_kid, trigger: rotation.trigger, period: rotation.period })
      )

    const rotate = Effect.gen(function*() {
      if (keyFile !== undefined) {
        return yield* new ReceiptKeyFromFile()
      }
      const row = yield* generateRow
      const rotation = yield* sql.withTransaction(Effect.gen(function*() {
        yield* lockExclusive
        return yield* activate(row, "manual", undefined)
      })).pipe(Effect.orDie)
      current = yield* openRow(row)
      yield* logRotation(rotation)
      return rotation
    })

    /** The current key's activation and the database clock: is a scheduled rotation due, and for which period? */
    const dueCheck = Effect.gen(function*() {
      const [row] = yield* sql<{ kid: string; activated_at: string; now: string }>`
        SELECT kid, ${sql.literal(epochMs("activated_at"))} AS activated_at, ${sql.literal(epochMs("clock_timestamp()"))} AS now
        FROM receipt_signing_keys WHERE is_current`
      const nowMs = Number(row!.now)
      const periodStart = periodStartOf(schedule, nowMs)!
      return { due: Number(row!.activated_at) < periodStart, periodStart, nowMs }
    })

    /** The scheduled rotation, and how long until the next boundary (database clock). */
    const checkSchedule = Effect.gen(function*() {
      if (!scheduled) return { rotation: undefined, waitMs: checkMs }
      const first = yield* dueCheck
      let rotation: ReceiptKeyRotation | undefined
      if (first.due) {
        // The key is made before the lock is taken (key generation and sealing take a few milliseconds, during
        // which settlements would otherwise wait); a process that finds the rotation done under the lock drops it.
        const row = yield* generateRow
        rotation = yield* sql.withTransaction(Effect.gen(function*() {
          yield* lockExclusive
          const again = yield* dueCheck
          return again.due ? yield* activate(row, "schedule", again.periodStart) : undefined
        }))
        if (rotation !== undefined) {
          current = yield* openRow(row)
          yield* logRotation(rotation)
        }
      }
      yield* refresh
      const nowMs = yield* databaseNowMs
      return { rotation, waitMs: Math.max(0, nextPeriodStart(schedule, nowMs)! - nowMs) }
    }).pipe(Effect.orDie)

    if (keyFile === undefined) {
      const refreshLoop = refresh.pipe(Effect.catchCause((cause) => Effect.logWarning("receipt key refresh failed", cause)))
      yield* Effect.forkScoped(Effect.repeat(refreshLoop, Schedule.spaced(Duration.millis(refreshMs))).pipe(Effect.delay(Duration.millis(refreshMs))))
    }
    if (scheduled) {
      // Every process wakes at each boundary (a few ms after it, so the database clock has passed it too) and at
      // least every RECEIPT_KEY_ROTATION_CHECK_MS; the first to take the lock makes the period's key.
      const step = checkSchedule.pipe(
        Effect.map(({ waitMs }) => Math.min(checkMs, waitMs + 5)),
        Effect.catchCause((cause) => Effect.as(Effect.logWarning("scheduled receipt key rotation failed", cause), checkMs)),
        Effect.flatMap((waitMs) => Effect.sleep(Duration.millis(waitMs)))
      )
      yield* Effect.forkScoped(Effect.forever(step))
    } else if (keyFile !== undefined && schedule.kind !== "off") {
      yield* Effect.logInfo("receipt keys come from RECEIPT_SIGNING_KEY_FILE: the rotation schedule does not apply (replace the file to rotate)")
    }

    const status = Effect.gen(function*() {
      const rows = yield* sql<{
        kid: string
        is_current: boolean
        rotation_trigger: RotationTrigger
        source: "generated" | "file"
        activated_at: string
        retired_at: string | null
        period_start: string | null
      }>`
        SELECT kid, is_current, rotation_trigger, source, ${sql.literal(epochMs("activated_at"))} AS activated_at,
          ${sql.literal(epochMs("retired_at"))} AS retired_at, ${sql.literal(epochMs("period_start"))} AS period_start
        FROM receipt_signing_keys ORDER BY is_current DESC, activated_at DESC, kid`
      const nowMs = yield* databaseNowMs
      const iso = (ms: string | null) => (ms === null ? null : new Date(Number(ms)).toISOString())
      const keys: Array<ReceiptKeyRecord> = rows.map((r) => ({
        kid: r.kid,
        status: r.is_current ? "current" : "retired",
        trigger: r.rotation_trigger,
        source: r.source,
        activated_at: iso(r.activated_at)!,
        retired_at: iso(r.retired_at),
        period: r.period_start === null ? null : periodName(schedule, Number(r.period_start))
      }))
      const next = scheduled ? nextPeriodStart(schedule, nowMs) : undefined
      return { schedule: keyFile === undefined ? schedule.name : "file", next_rotation_at: next === undefined ? null : new Date(next).toISOString(), keys }
    }).pipe(Effect.orDie)

    return ReceiptKeys.of({
      current: Effect.sync(() => current),
      refresh,
      withCurrent: <A, E, R>(use: (key: CurrentReceiptKey) => Effect.Effect<A, E, R>) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* lockShared
          return yield* use(yield* Effect.flatMap(selectCurrent, follow))
        })).pipe(Effect.catchIf(isSqlError, (e) => Effect.die(e))) as Effect.Effect<A, E, R>,
      jwks: sql<{ kid: string; public_jwk: PublicJwk }>`
        SELECT kid, public_jwk FROM receipt_signing_keys ORDER BY is_current DESC, activated_at DESC, kid`.pipe(
        Effect.map((rows) => ({ keys: rows.map((r) => toReceiptJwk(r.public_jwk, r.kid)) })),
        Effect.orDie
      ),
      resolveKey: (kid) =>
        Effect.gen(function*() {
          const cached = verifyKeys.get(kid)
          if (cached !== undefined) return yield* Effect.promise(() => cached)
          const rows = yield* sql<{ public_jwk: PublicJwk }>`SELECT public_jwk FROM receipt_signing_keys WHERE kid = ${kid}`.pipe(
            Effect.orDie
          )
          if (rows.length === 0) return undefined
          const imported = importPublicJwk(rows[0]!.public_jwk)
          verifyKeys.set(kid, imported)
          return yield* Effect.promise(() => imported)
        }),
      rotate,
      rotateIfDue: Effect.map(checkSchedule, (r) => r.rotation),
      status
    })
  })
)
