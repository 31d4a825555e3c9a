import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The PostgreSQL advisory lock that orders signing against rotation (docs/receipts.md, "Signing keys"): every write of
 * signed receipts and every signature made outside a settlement takes it SHARED and checks that the key it signed
 * with is still the current one; a rotation takes it EXCLUSIVE, so it waits for those in flight and everything after
 * it sees the new key. A receipt is therefore only ever committed while the key that signed it is current.
 */
export const RECEIPT_KEY_LOCK = 4142205307

/**
 * Scheduled rotation of the receipt signing key (issue 42):
 * - `rotation_trigger`: why the key became current (`initial` first key, `schedule`, `manual` CLI/admin API, `file`
 *   RECEIPT_SIGNING_KEY_FILE); `activated_at`: when (database clock); `period_start`: the schedule period it was
 *   made for. At most one scheduled key per period, whatever number of gateway processes race at the boundary.
 * - `relay_settle_many` refuses a batch signed with a key that is no longer current (`{ok: false, current_kid}`,
 *   nothing of it written); the sealer re-signs it with the current key. Batches that signed nothing (holds and
 *   releases only) carry no `kid` and take no lock.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE receipt_signing_keys ADD COLUMN rotation_trigger text NOT NULL DEFAULT 'initial'
    CHECK (rotation_trigger IN ('initial', 'schedule', 'manual', 'file'))`
  yield* sql`ALTER TABLE receipt_signing_keys ADD COLUMN activated_at timestamptz`
  yield* sql`ALTER TABLE receipt_signing_keys ADD COLUMN period_start timestamptz`
  yield* sql`UPDATE receipt_signing_keys SET activated_at = created_at,
    rotation_trigger = CASE WHEN source = 'file' THEN 'file' ELSE 'manual' END`
  yield* sql`UPDATE receipt_signing_keys SET rotation_trigger = 'initial'
    WHERE kid = (SELECT kid FROM receipt_signing_keys WHERE source = 'generated' ORDER BY created_at, kid LIMIT 1)`
  yield* sql`ALTER TABLE receipt_signing_keys ALTER COLUMN activated_at SET DEFAULT now()`
  yield* sql`CREATE UNIQUE INDEX receipt_signing_keys_one_per_period ON receipt_signing_keys (period_start)
    WHERE rotation_trigger = 'schedule'`
  yield* sql.unsafe(`
CREATE OR REPLACE FUNCTION relay_settle_many(batches jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  started_with text := current_setting('synchronous_commit');
  any_durable boolean := false;
  answers jsonb := '[]'::jsonb;
  current_kid text;
  b jsonb;
BEGIN
  -- Signed batches: under the shared lock a rotation takes exclusively, so the key read here stays current until
  -- this transaction commits (each statement of this volatile function reads what committed before it ran).
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(batches) AS t(value) WHERE t.value->>'kid' IS NOT NULL) THEN
    PERFORM pg_advisory_xact_lock_shared(${RECEIPT_KEY_LOCK});
    SELECT kid INTO current_kid FROM receipt_signing_keys WHERE is_current;
  END IF;
  FOR b IN SELECT value FROM jsonb_array_elements(batches) WITH ORDINALITY AS t(value, n) ORDER BY n LOOP
    IF b->>'kid' IS NOT NULL AND b->>'kid' IS DISTINCT FROM current_kid THEN
      answers := answers || jsonb_build_array(jsonb_build_object('ok', false, 'current_kid', current_kid));
      CONTINUE;
    END IF;
    answers := answers || jsonb_build_array(relay_settle(b));
    any_durable := any_durable
      OR jsonb_array_length(coalesce(b->'heads', '[]'::jsonb)) > 0
      OR jsonb_array_length(coalesce(b->'usage', '[]'::jsonb)) > 0;
  END LOOP;
  IF any_durable THEN
    PERFORM set_config('synchronous_commit', started_with, true);
  END IF;
  RETURN answers;
END
$fn$`)
})
