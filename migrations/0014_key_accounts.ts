import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Every gateway key has an account (docs/decisions.md "Every key has an account"). Keys minted by key management
 * (portal `POST /api/keys`, rotation) were stored with `account_id` null, and their calls were billed but never sealed
 * (no v2 header, no trailer, no stored v1). This repairs existing rows the way new keys are now made, then makes the
 * column NOT NULL so sealing can never again depend on it:
 *   1. a rotated key's successor inherits its predecessor's account (every generation);
 *   2. any other key takes its organisation's receipt account: the oldest account homed there, else its oldest
 *      owner, else a service account (no e-mail, no password) created for the organisation (the order of
 *      layers/pg/receiptAccount.ts, spelled out here so that this migration never changes with it).
 * Calls billed before this ran keep no receipt: `cli.ts ledger check` lists them (they are not re-sealed with a false
 * timestamp).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (;;) {
    const inherited = yield* sql`
      UPDATE api_keys k SET account_id = p.account_id FROM api_keys p
      WHERE p.replaced_by = k.id AND k.account_id IS NULL AND p.account_id IS NOT NULL
      RETURNING k.id`
    if (inherited.length === 0) break
  }
  yield* sql`
    INSERT INTO accounts (id, org_id, email, email_verified)
    SELECT 'acct_' || replace(gen_random_uuid()::text, '-', ''), o.id, NULL, false
    FROM organisations o
    WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.org_id = o.id AND k.account_id IS NULL)
      AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.org_id = o.id)
      AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = o.id AND m.role = 'owner')`
  yield* sql`
    UPDATE api_keys k SET account_id = (
      SELECT id FROM (
        SELECT a.id, 0 AS rank, a.created_at FROM accounts a WHERE a.org_id = k.org_id
        UNION ALL
        SELECT m.account_id, 1, m.created_at FROM memberships m WHERE m.org_id = k.org_id AND m.role = 'owner'
      ) candidates ORDER BY rank, created_at, id LIMIT 1)
    WHERE k.account_id IS NULL`
  yield* sql`ALTER TABLE api_keys ALTER COLUMN account_id SET NOT NULL`
})
