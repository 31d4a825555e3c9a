import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ScimOrganisationNotFound, ScimTokenNotFound, ScimTokens, ScimUnauthorized } from "../../services/ScimTokens.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { appendAudit, isoOrNull } from "./audit.ts"
import { base64UrlRandom } from "./randomToken.ts"

const TOKEN_PREFIX = "scim_"
/** `scim_` + 43 base64url characters (256 random bits). */
const WELL_FORMED = /^scim_[A-Za-z0-9_-]{43}$/

export const ScimTokensPg = Layer.effect(
  ScimTokens,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    /** An unknown organisation is ScimOrganisationNotFound (404 `not_found`), not an empty answer or a foreign-key die. */
    const requireOrganisation = (orgId: string) =>
      Effect.gen(function*() {
        const org = yield* sql`SELECT 1 FROM organisations WHERE id = ${orgId}`
        if (org.length === 0) return yield* new ScimOrganisationNotFound({ orgId })
      })
    return ScimTokens.of({
      issue: ({ orgId, actor }) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* requireOrganisation(orgId)
          const token = TOKEN_PREFIX + base64UrlRandom(32)
          const id = `sct_${crypto.randomUUID().replaceAll("-", "")}`
          yield* sql`INSERT INTO scim_tokens ${sql.insert({ id, org_id: orgId, token_hash: sha256HexSync(token), token_prefix: token.slice(0, 12) })}`
          yield* appendAudit(sql, { actor, action: "scim.token_issued", target: id, orgId })
          return { id, token }
        })).pipe(Effect.catchTag("SqlError", Effect.die)),
      revoke: ({ orgId, tokenId, actor }) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql`UPDATE scim_tokens SET revoked_at = now() WHERE id = ${tokenId} AND org_id = ${orgId} AND revoked_at IS NULL RETURNING id`
          if (rows.length === 0) return yield* new ScimTokenNotFound({ tokenId })
          yield* appendAudit(sql, { actor, action: "scim.token_revoked", target: tokenId, orgId })
        })).pipe(Effect.catchTag("SqlError", Effect.die)),
      list: (orgId) =>
        Effect.gen(function*() {
          yield* requireOrganisation(orgId)
          const rows = yield* sql<{ id: string; token_prefix: string; created_at: unknown; last_used_at: unknown; revoked_at: unknown }>`
            SELECT id, token_prefix, created_at, last_used_at, revoked_at FROM scim_tokens WHERE org_id = ${orgId} ORDER BY created_at, id`
          return rows.map((r) => ({
            id: r.id,
            prefix: r.token_prefix,
            createdAt: isoOrNull(r.created_at)!,
            lastUsedAt: isoOrNull(r.last_used_at),
            revokedAt: isoOrNull(r.revoked_at)
          }))
        }).pipe(Effect.catchTag("SqlError", Effect.die)),
      authenticate: (bearer) =>
        Effect.gen(function*() {
          if (!WELL_FORMED.test(bearer)) return yield* new ScimUnauthorized()
          const rows = yield* sql<{ id: string; org_id: string; stale: boolean }>`
            SELECT id, org_id, (last_used_at IS NULL OR last_used_at < now() - interval '1 minute') AS stale
            FROM scim_tokens WHERE token_hash = ${sha256HexSync(bearer)} AND revoked_at IS NULL`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* new ScimUnauthorized()
          // Bookkeeping for the operator's list, at most once a minute per token (an IdP's sync sends requests in
          // bursts); it never refuses the request it records.
          if (rows[0].stale) yield* sql`UPDATE scim_tokens SET last_used_at = now() WHERE id = ${rows[0].id}`.pipe(Effect.ignore)
          return { orgId: rows[0].org_id, tokenId: rows[0].id }
        })
    })
  })
)
