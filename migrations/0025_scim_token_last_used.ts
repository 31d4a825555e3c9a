import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * `scim_tokens.last_used_at`: when the identity provider last authenticated with the token (refreshed at most once a
 * minute, layers/pg/ScimTokens.ts). The operator's list (`cli.ts sso scim-token list`, `GET
 * /api/admin/sso/scim-tokens`) shows it, so a token the IdP stopped using can be revoked with confidence.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE scim_tokens ADD COLUMN last_used_at timestamptz`
})
