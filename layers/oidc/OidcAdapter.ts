import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Adapter, AdapterConstructor, AdapterPayload } from "oidc-provider"
import type { KeyEncryption } from "../../services/KeyEncryption.ts"
import { jsonColumn } from "../pg/jsonColumn.ts"
import { isSealed, openJson, payloadContext, sealJson, storedId } from "./atRest.ts"

/** Runs an Effect that needs only the SQL client, as a Promise (oidc-provider's adapters are Promise-based). */
export type RunSql = <A>(effect: Effect.Effect<A, unknown, never>) => Promise<A>

/**
 * oidc-provider storage in Postgres/PGlite: one generic table `oidc_payloads (model, id)` for every model
 * (Session, AccessToken, AuthorizationCode, RefreshToken, Grant, Interaction, Client, ...). Ids, uids and user codes
 * are stored as their SHA-256 and payloads sealed under the KEK (layers/oidc/atRest.ts); `account_id` is kept beside
 * the sealed payload so an account's deletion can find its rows. Expired rows are ignored on read.
 */
export const makeOidcAdapter = (sql: SqlClient.SqlClient, keys: KeyEncryption["Service"], run: RunSql): AdapterConstructor =>
  class PgOidcAdapter implements Adapter {
    readonly model: string
    constructor(model: string) {
      this.model = model
    }

    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const model = this.model
      const expiresAt = expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000).toISOString()
      return run(Effect.gen(function*() {
        const row = yield* protectedRow(keys, model, id, payload, expiresAt)
        yield* sql`INSERT INTO oidc_payloads ${sql.insert(row)}
          ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
            user_code = EXCLUDED.user_code, uid = EXCLUDED.uid, account_id = EXCLUDED.account_id, expires_at = EXCLUDED.expires_at`
      }))
    }

    private findWhere(column: "id" | "user_code" | "uid", value: string): Promise<AdapterPayload | undefined> {
      const model = this.model
      const key = storedId(value)
      const where = column === "id" ? sql`id = ${key}` : column === "uid" ? sql`uid = ${key}` : sql`user_code = ${key}`
      return run(Effect.gen(function*() {
        const rows = yield* sql<{ id: string; payload: unknown; consumed: boolean }>`
          SELECT id, payload, consumed_at IS NOT NULL AS consumed FROM oidc_payloads
          WHERE model = ${model} AND ${where} AND (expires_at IS NULL OR expires_at > now())`
        const row = rows[0]
        if (row === undefined) return undefined
        const payload = yield* openJson<AdapterPayload>(keys, payloadContext(model, row.id), row.payload)
        // oidc-provider learns that a code or token was already used from a truthy `consumed`.
        return row.consumed ? { ...payload, consumed: true } : payload
      }))
    }

    find(id: string) {
      return this.findWhere("id", id)
    }
    findByUserCode(userCode: string) {
      return this.findWhere("user_code", userCode)
    }
    findByUid(uid: string) {
      return this.findWhere("uid", uid)
    }
    consume(id: string): Promise<void> {
      return run(sql`UPDATE oidc_payloads SET consumed_at = now() WHERE model = ${this.model} AND id = ${storedId(id)}`.pipe(Effect.asVoid))
    }
    destroy(id: string): Promise<void> {
      return run(sql`DELETE FROM oidc_payloads WHERE model = ${this.model} AND id = ${storedId(id)}`.pipe(Effect.asVoid))
    }
    revokeByGrantId(grantId: string): Promise<void> {
      return run(sql`DELETE FROM oidc_payloads WHERE grant_id = ${grantId}`.pipe(Effect.asVoid))
    }
  }

/** The oidc_payloads row for `payload` under `id` (the plain id): hashed ids, sealed payload. */
export const protectedRow = (
  keys: KeyEncryption["Service"],
  model: string,
  id: string,
  payload: AdapterPayload,
  expiresAt: string | null
) =>
  Effect.gen(function*() {
    const sid = storedId(id)
    const sealed = yield* sealJson(keys, payloadContext(model, sid), payload)
    return {
      model,
      id: sid,
      payload: JSON.stringify(sealed),
      grant_id: typeof payload.grantId === "string" ? payload.grantId : null,
      user_code: typeof payload.userCode === "string" ? storedId(payload.userCode) : null,
      uid: typeof payload.uid === "string" ? storedId(payload.uid) : null,
      account_id: typeof payload.accountId === "string" ? payload.accountId : null,
      expires_at: expiresAt
    }
  })

/**
 * Rows written before payloads were sealed (plain ids and JSON) are rewritten in their protected form; run at start.
 * Idempotent, and safe with several nodes starting at once: a row another node has already moved is not found again.
 */
export const protectLegacyRows = (sql: SqlClient.SqlClient, keys: KeyEncryption["Service"]) =>
  Effect.gen(function*() {
    const legacy = yield* sql<{ model: string; id: string; payload: unknown; expires_at: string | null }>`
      SELECT model, id, payload, expires_at::text AS expires_at FROM oidc_payloads WHERE NOT (payload ? 'sealed')`
    let moved = 0
    for (const row of legacy) {
      const payload = jsonColumn<AdapterPayload>(row.payload)
      if (isSealed(payload)) continue
      const protectedForm = yield* protectedRow(keys, row.model, row.id, payload, row.expires_at)
      const updated = yield* sql`
        UPDATE oidc_payloads SET id = ${protectedForm.id}, payload = ${protectedForm.payload}::jsonb,
          user_code = ${protectedForm.user_code}, uid = ${protectedForm.uid}, account_id = ${protectedForm.account_id}
        WHERE model = ${row.model} AND id = ${row.id} AND NOT (payload ? 'sealed')
        RETURNING 1 AS one`
      moved += updated.length
    }
    return moved
  })
