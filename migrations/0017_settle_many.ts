import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * `relay_settle_many(batches jsonb)`: several organisations' settlement batches (each the document `relay_settle`
 * reads, migrations/0010_settle_batch.ts) in ONE statement and so one commit: the group commit across tenants of the
 * sealing pipeline (layers/pg/ReceiptSealer.ts). Answers a JSON array with `relay_settle`'s answer for each batch, in
 * order. A batch refused for a moved chain head wrote nothing (relay_settle checks every head before writing), so
 * the others commit without it; an error in any batch fails the whole statement and the caller retries the batches
 * one by one.
 *
 * The caller orders the batches by organisation id, and relay_settle locks an organisation's chain heads in
 * chain_id order and then its wallet, so two gateway processes writing overlapping sets of tenants take every
 * lock in the same order and cannot deadlock.
 *
 * relay_settle turns `synchronous_commit` off for the transaction when its batch holds only wallet holds and
 * releases. That must not leak onto another tenant's receipts and debits in the same transaction: when any batch
 * is durable the setting the transaction started with is put back before it commits.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
CREATE OR REPLACE FUNCTION relay_settle_many(batches jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  started_with text := current_setting('synchronous_commit');
  any_durable boolean := false;
  answers jsonb := '[]'::jsonb;
  b jsonb;
BEGIN
  FOR b IN SELECT value FROM jsonb_array_elements(batches) WITH ORDINALITY AS t(value, n) ORDER BY n LOOP
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
