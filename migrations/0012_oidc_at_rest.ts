import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * OpenID provider state sealed at rest (layers/oidc/atRest.ts): payloads become opaque, so the account a row belongs
 * to is kept beside it for an account's deletion. Rows from before are rewritten by the provider at its next start.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE oidc_payloads ADD COLUMN account_id text`
  yield* sql`UPDATE oidc_payloads SET account_id = payload->>'accountId' WHERE payload ? 'accountId'`
  yield* sql`CREATE INDEX oidc_payloads_account ON oidc_payloads (account_id) WHERE account_id IS NOT NULL`
})
