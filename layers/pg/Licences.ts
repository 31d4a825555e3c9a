import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../../services/AppConfig.ts"
import { InvalidLicence, LicenceAlreadyRedeemed, Licences } from "../../services/Licences.ts"
import { Outbox } from "../../services/Outbox.ts"
import { signLicence, verifyLicence } from "../../src/billing/licenceCode.ts"
import { exportPrivateJwk, generateSigningKeyPair, importPrivateJwk, importPublicJwk, type PrivateJwk } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { creditInTransaction } from "./creditWallet.ts"

/**
 * The issuer key: LICENCE_SIGNING_KEY_FILE (a private P-256 JWK), else DATA_DIR/licence-signing-key.json
 * (generated on first start, 0600), else (DATA_DIR=:memory:, tests) a key for this process only. Several
 * gateway nodes must share LICENCE_SIGNING_KEY_FILE, or a code issued by one would not verify on another.
 */
const loadIssuerJwk = async (configured: string | undefined, dataDir: string | undefined): Promise<PrivateJwk> => {
  if (configured) return JSON.parse(readFileSync(configured, "utf8")) as PrivateJwk
  const generate = async () => exportPrivateJwk((await generateSigningKeyPair()).privateKey)
  if (dataDir === undefined) return generate()
  const path = join(dataDir, "licence-signing-key.json")
  if (existsSync(path)) return JSON.parse(readFileSync(path, "utf8")) as PrivateJwk
  const jwk = await generate()
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  writeFileSync(path, JSON.stringify(jwk) + "\n", { mode: 0o600, flag: "wx" })
  chmodSync(path, 0o600)
  return jwk
}

export const LicencesPg = Layer.effect(
  Licences,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const config = yield* AppConfig
    const jwk = yield* Effect.tryPromise(() => loadIssuerJwk(config.settings.licenceSigningKeyFile, config.dataDir)).pipe(Effect.orDie)
    const privateKey = yield* Effect.promise(() => importPrivateJwk(jwk))
    const publicKey = yield* Effect.promise(() => importPublicJwk(jwk))
    return Licences.of({
      issue: (micros) =>
        Effect.promise(() => signLicence(privateKey, { micros })).pipe(
          Effect.map(({ code, claims }) => ({ code, licenceId: claims.licence_id, usd: claims.usd, issuedAt: claims.issued_at }))
        ),
      redeem: (orgId, code) =>
        Effect.gen(function*() {
          const verdict = yield* Effect.promise(() => verifyLicence(publicKey, code))
          if (!verdict.ok) return yield* new InvalidLicence({ reason: verdict.reason })
          const { licence_id, issued_at } = verdict.claims
          const result = yield* sql.withTransaction(Effect.gen(function*() {
            // The primary key on licence_id decides: the first redemption inserts, every later one finds it.
            const inserted = yield* sql<{ licence_id: string }>`
              INSERT INTO licence_redemptions ${
              sql.insert({ licence_id, org_id: orgId, amount_micros: verdict.micros.toString(), issued_at: new Date(issued_at) })
            } ON CONFLICT (licence_id) DO NOTHING RETURNING licence_id`
            if (inserted.length === 0) return undefined
            return yield* creditInTransaction(sql, outbox, { orgId, micros: verdict.micros, kind: "licence_credit", reference: `licence:${licence_id}` })
          })).pipe(Effect.orDie)
          if (result === undefined) {
            return yield* new LicenceAlreadyRedeemed({ licenceId: licence_id })
          }
          return { licenceId: licence_id, amountMicros: verdict.micros, balanceMicros: result.balanceMicros }
        })
    })
  })
)
