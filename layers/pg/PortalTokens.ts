import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PortalTokens } from "../../services/PortalTokens.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { isWellFormedPortalToken, keyPrefixOf, newPortalToken } from "../../src/keys/format.ts"
import { isAbility } from "../../src/keys/scopes.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"

const portalAuthRequired = () =>
  new ApiError({ status: 401, code: "portal_auth_required", message: "This route needs a portal session or portal token (spt_...)." })

export const PortalTokensPg = Layer.effect(
  PortalTokens,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return PortalTokens.of({
      create: ({ orgId, abilities, name }) =>
        Effect.gen(function*() {
          const unknown = abilities.filter((a) => !isAbility(a))
          if (unknown.length > 0) {
            return yield* new ApiError({
              status: 400,
              code: "invalid_request",
              message: `Unknown abilities: ${unknown.join(", ")}`,
              extra: { details: { path: "abilities" } }
            })
          }
          const org = yield* sql`SELECT 1 FROM organisations WHERE id = ${orgId}`.pipe(Effect.orDie)
          if (org.length === 0) return yield* new ApiError({ status: 404, code: "not_found", message: "No such organisation." })
          const token = newPortalToken()
          const id = `ptk_${crypto.randomUUID().replaceAll("-", "")}`
          yield* sql`INSERT INTO portal_tokens ${
            sql.insert({
              id,
              org_id: orgId,
              token_hash: sha256HexSync(token),
              token_prefix: keyPrefixOf(token),
              name: name ?? null,
              abilities: JSON.stringify(abilities)
            })
          }`.pipe(Effect.orDie)
          return { id, token, abilities }
        }),
      authenticate: (bearer) =>
        Effect.gen(function*() {
          if (!isWellFormedPortalToken(bearer)) return yield* portalAuthRequired()
          const rows = yield* sql<{ id: string; org_id: string; abilities: ReadonlyArray<string>; revoked_at: unknown }>`
            SELECT id, org_id, abilities, revoked_at FROM portal_tokens WHERE token_hash = ${sha256HexSync(bearer)}`.pipe(Effect.orDie)
          const row = rows[0]
          if (row === undefined || row.revoked_at !== null) return yield* portalAuthRequired()
          return { tokenId: row.id, orgId: row.org_id, abilities: row.abilities }
        })
    })
  })
)
