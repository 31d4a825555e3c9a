import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Anonymous demo keys (`POST /api/v1/demo/key`): a key may expire (`expires_at`; demo keys after 24 h), and the $2 a
 * demo organisation starts with is its own ledger kind, so an operator can tell demo money from trial credit. A
 * changed `expires_at` is announced to the key caches like every other column authentication reads (0011).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN expires_at timestamptz`
  yield* sql`ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check`
  yield* sql`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
    CHECK (kind IN ('debit', 'topup', 'trial_credit', 'licence_credit', 'adjustment', 'demo_credit'))`
  yield* sql`DROP TRIGGER api_keys_announce_update ON api_keys`
  yield* sql`CREATE TRIGGER api_keys_announce_update AFTER UPDATE ON api_keys FOR EACH ROW
    WHEN (OLD.key_hash IS DISTINCT FROM NEW.key_hash OR OLD.key_prefix IS DISTINCT FROM NEW.key_prefix
      OR OLD.org_id IS DISTINCT FROM NEW.org_id OR OLD.account_id IS DISTINCT FROM NEW.account_id
      OR OLD.tier IS DISTINCT FROM NEW.tier OR OLD.status IS DISTINCT FROM NEW.status
      OR OLD.permissions IS DISTINCT FROM NEW.permissions OR OLD.models IS DISTINCT FROM NEW.models
      OR OLD.expires_at IS DISTINCT FROM NEW.expires_at)
    EXECUTE FUNCTION relay_announce_api_key()`
})
