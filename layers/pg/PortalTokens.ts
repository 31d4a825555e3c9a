import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { PortalTokenNotValid, PortalTokens, UnknownAbilities } from "../../services/PortalTokens.ts"
import { OrganisationNotFound } from "../../services/Wallets.ts"
import { isWellFormedPortalToken, keyPrefixOf, newPortalToken } from "../../src/keys/format.ts"
import { isAbility } from "../../src/keys/scopes.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"

export const PortalTokensPg = Layer.effect(
  PortalTokens,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return PortalTokens.of({
      create: ({ orgId, abilities, name }) =>
        Effect.gen(function*() {
          const unknown = abilities.filter((a) => !isAbility(a))
          if (unknown.length > 0) {
            return yield* new UnknownAbilities({ abilities: unknown })
          }
          const org = yield* sql`SELECT 1 FROM organisations WHERE id = ${orgId}`.pipe(Effect.orDie)
          if (org.length === 0) return yield* new OrganisationNotFound({ orgId })
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
          if (!isWellFormedPortalToken(bearer)) return yield* new PortalTokenNotValid()
          const rows = yield* sql<{ id: string; org_id: string; abilities: ReadonlyArray<string>; revoked_at: unknown }>`
            SELECT id, org_id, abilities, revoked_at FROM portal_tokens WHERE token_hash = ${sha256HexSync(bearer)}`.pipe(Effect.orDie)
          const row = rows[0]
          if (row === undefined || row.revoked_at !== null) return yield* new PortalTokenNotValid()
          return { tokenId: row.id, orgId: row.org_id, abilities: row.abilities }
        })
    })
  })
)
