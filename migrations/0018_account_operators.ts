import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Operator accounts: a person whose portal session carries `ability:admin` (the admin view). Granted and revoked only
 * by the operator CLI (`cli.ts account operator grant|revoke`), each change in the audit log; null means not an
 * operator (docs/decisions.md, "Operators sign in to the portal with an operator-granted flag").
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE accounts ADD COLUMN operator_granted_at timestamptz`
})
