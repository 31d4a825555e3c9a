import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Adapter, AdapterPayload } from "oidc-provider"

/** Runs an Effect that needs only the SQL client, as a Promise (oidc-provider's adapters are Promise-based). */
export type RunSql = <A>(effect: Effect.Effect<A, unknown, never>) => Promise<A>

/**
 * oidc-provider storage in Postgres/PGlite: one generic table `oidc_payloads (model, id)` for every model
 * (Session, AccessToken, AuthorizationCode, RefreshToken, Grant, Interaction, Client, ...). Expired rows are
 * ignored on read.
 */
export const makeOidcAdapter = (sql: SqlClient.SqlClient, run: RunSql) =>
  class PgOidcAdapter implements Adapter {
    readonly model: string
    constructor(model: string) {
      this.model = model
    }

    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const expiresAt = expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000).toISOString()
      const row = {
        model: this.model,
        id,
        payload: JSON.stringify(payload),
        grant_id: payload.grantId ?? null,
        user_code: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expires_at: expiresAt
      }
      return run(sql`INSERT INTO oidc_payloads ${sql.insert(row)}
        ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
          user_code = EXCLUDED.user_code, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`.pipe(Effect.asVoid))
    }

    private findWhere(column: "id" | "user_code" | "uid", value: string): Promise<AdapterPayload | undefined> {
      const where = column === "id" ? sql`id = ${value}` : column === "uid" ? sql`uid = ${value}` : sql`user_code = ${value}`
      return run(sql<{ payload: AdapterPayload; consumed: boolean }>`
        SELECT payload, consumed_at IS NOT NULL AS consumed FROM oidc_payloads
        WHERE model = ${this.model} AND ${where} AND (expires_at IS NULL OR expires_at > now())`.pipe(
        Effect.map((rows) => {
          const row = rows[0]
          if (row === undefined) return undefined
          const payload = typeof row.payload === "string" ? JSON.parse(row.payload) : row.payload
          // oidc-provider learns that a code or token was already used from a truthy `consumed`.
          return row.consumed ? { ...payload, consumed: true } : payload
        })
      ))
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
      return run(sql`UPDATE oidc_payloads SET consumed_at = now() WHERE model = ${this.model} AND id = ${id}`.pipe(Effect.asVoid))
    }
    destroy(id: string): Promise<void> {
      return run(sql`DELETE FROM oidc_payloads WHERE model = ${this.model} AND id = ${id}`.pipe(Effect.asVoid))
    }
    revokeByGrantId(grantId: string): Promise<void> {
      return run(sql`DELETE FROM oidc_payloads WHERE grant_id = ${grantId}`.pipe(Effect.asVoid))
    }
  }
