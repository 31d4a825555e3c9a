import { Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { AppConfig } from "../../services/AppConfig.ts"
import { KeyEncryption } from "../../services/KeyEncryption.ts"
import { type CurrentReceiptKey, ReceiptKeys } from "../../services/ReceiptKeys.ts"
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
import { ApiError } from "../../src/http/ApiError.ts"
import { toReceiptJwk } from "../../sdks/typescript/src/wire/receipts/jwks.ts"
import { nodeSignerFromPrivateJwk } from "../crypto/nodeEs256Signer.ts"

/** AES-GCM additional data: a stored private key opens only as the key of its own kid. */
export const receiptKeyContext = (kid: string) => `receipt-signing-key:${kid}`

interface KeyRow {
  readonly kid: string
  readonly public_jwk: PublicJwk
  readonly private_key_enc: string | null
}

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
 * Keys in `receipt_signing_keys`. The current key's signer (a node:crypto KeyObject) is cached, so signing never
 * touches the database; a background fiber re-reads which key is current every RECEIPT_KEYS_REFRESH_MS (default
 * 60 s), so a rotation made by another gateway process is picked up (until then this process keeps signing with
 * the previous key, which stays published, so its receipts still verify).
 */
export const ReceiptKeysPg = Layer.effect(
  ReceiptKeys,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const encryption = yield* KeyEncryption
    const keyFile = config.env.RECEIPT_SIGNING_KEY_FILE?.trim() || undefined
    const refreshMs = Number(config.env.RECEIPT_KEYS_REFRESH_MS ?? 60_000)
    if (!(refreshMs > 0)) return yield* Effect.die(new Error("RECEIPT_KEYS_REFRESH_MS must be a positive number"))

    const verifyKeys = new Map<string, Promise<CryptoKey>>()

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
        sql.insert({ ...row, public_jwk: JSON.stringify(row.public_jwk), source: "generated", is_current: true })
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
        // Publish the file key (public part only) and make it current; earlier keys stay published.
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO receipt_signing_keys ${
            sql.insert({ kid, public_jwk: JSON.stringify(publicJwk), private_key_enc: null, source: "file", is_current: false })
          } ON CONFLICT (kid) DO NOTHING`
          yield* sql`UPDATE receipt_signing_keys SET is_current = false, retired_at = now() WHERE is_current AND kid <> ${kid}`
          yield* sql`UPDATE receipt_signing_keys SET is_current = true, retired_at = NULL WHERE kid = ${kid} AND NOT is_current`
        })).pipe(Effect.orDie)
        return key
      })

    let current: CurrentReceiptKey = keyFile !== undefined ? yield* loadFromFile(keyFile) : yield* loadOrCreateCurrent

    if (keyFile === undefined) {
      const refresh = Effect.gen(function*() {
        const rows = yield* selectCurrent
        if (rows.length > 0 && rows[0]!.kid !== current.kid) current = yield* openRow(rows[0]!)
      }).pipe(Effect.catchCause((cause) => Effect.logWarning("receipt key refresh failed", cause)))
      yield* Effect.forkScoped(Effect.repeat(refresh, Schedule.spaced(Duration.millis(refreshMs))).pipe(Effect.delay(Duration.millis(refreshMs))))
    }

    const rotate = Effect.gen(function*() {
      if (keyFile !== undefined) {
        return yield* new ApiError({
          status: 409,
          code: "receipt_key_from_file",
          message: "Receipt keys come from RECEIPT_SIGNING_KEY_FILE: replace the file and restart to rotate."
        })
      }
      const row = yield* generateRow
      const previous = yield* sql.withTransaction(Effect.gen(function*() {
        // Lock the current row first so two concurrent rotations queue up instead of colliding on the index.
        const locked = yield* sql<{ kid: string }>`SELECT kid FROM receipt_signing_keys WHERE is_current FOR UPDATE`
        yield* sql`UPDATE receipt_signing_keys SET is_current = false, retired_at = now() WHERE is_current`
        yield* sql`INSERT INTO receipt_signing_keys ${
          sql.insert({ ...row, public_jwk: JSON.stringify(row.public_jwk), source: "generated", is_current: true })
        }`
        return locked[0]?.kid ?? null
      })).pipe(Effect.orDie)
      current = yield* openRow(row)
      yield* Effect.logInfo("receipt signing key rotated").pipe(Effect.annotateLogs({ kid: row.kid, previous_kid: previous }))
      return { kid: row.kid, previous_kid: previous }
    })

    return ReceiptKeys.of({
      current: Effect.sync(() => current),
      jwks: sql<{ kid: string; public_jwk: PublicJwk }>`
        SELECT kid, public_jwk FROM receipt_signing_keys ORDER BY is_current DESC, created_at DESC, kid`.pipe(
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
      rotate
    })
  })
)
