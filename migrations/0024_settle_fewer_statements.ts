import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { RECEIPT_KEY_LOCK } from "./0020_receipt_key_schedule.ts"

/**
 * `relay_settle` and `relay_settle_many` (migrations/0010, 0013, 0017, 0020) with the same effects and answers in
 * fewer statements: inside PostgreSQL each statement has a fixed cost (plan look-up, executor start and end, a
 * snapshot), and a completed call's batch ran about a dozen (docs/benchmark.md, "The settlement statement, fewer
 * writes"). It now runs two, three for a chain's first receipt:
 *
 * 1. One query locks the heads the batch expects (in chain_id order, as before, so concurrent writers never
 *    deadlock) and compares them. The head rows are created first only when the batch says one of its chains
 *    is new (`new_chains`, set by layers/pg/tenantBatch.ts when a head it expects is at genesis; a document
 *    without it, from an older gateway, creates them every time as before). A chain the batch expected to exist
 *    that does not is a moved head: the answer reports it at genesis and the caller re-signs it as new.
 * 2. One statement of data-modifying CTEs writes everything else: the heads moved, receipts v2 and v1,
 *    transparency leaves, usage records, ledger rows, the wallet holds released (holds taken through
 *    layers/pg/Settlement.ts; the relay's holds live in Redis or memory and find no row here), the wallet debited,
 *    and the outbox events with the debit's `billing.low_balance`. The head rows are already locked by this
 *    transaction (step 1), so the wallet row is still locked after them, as before.
 * 3. Failed-call receipts and new wallet holds, each only when the batch has some.
 *
 * `outbox_events_org` goes: nothing reads outbox events by organisation (the fan-out reads pending events by
 * `outbox_events_pending`), and it was one more index written per call.
 *
 * `relay_settle_many` checks for signed batches with a JSON path expression and walks the batches by index,
 * instead of two queries over `jsonb_array_elements`, and puts `synchronous_commit` back only when it mixed a batch
 * of holds only (which turned it off) with durable ones. Everything else is as before: a batch with a moved head or a
 * retired signing key writes nothing and says why, the hash and merge joins stay off inside relay_settle (0013),
 * and a batch of holds and releases only still commits without waiting for the WAL flush.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX IF EXISTS outbox_events_org`
  yield* sql.unsafe(`
CREATE OR REPLACE FUNCTION relay_settle(batch jsonb) RETURNS jsonb LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
DECLARE
  org text := batch->>'org_id';
  heads_in jsonb := coalesce(batch->'heads', '[]'::jsonb);
  head_count integer := jsonb_array_length(coalesce(batch->'heads', '[]'::jsonb));
  locked_count integer;
  stale boolean;
  heads jsonb;
  debit bigint := coalesce((batch->>'debit_micros')::bigint, 0);
  h record;
  granted jsonb := '[]'::jsonb;
  durable boolean := jsonb_array_length(coalesce(batch->'heads', '[]'::jsonb)) > 0
    OR jsonb_array_length(coalesce(batch->'usage', '[]'::jsonb)) > 0;
BEGIN
  IF head_count > 0 THEN
    IF coalesce((batch->>'new_chains')::boolean, true) THEN
      INSERT INTO receipt_chains (chain_id, org_id, kind, last_seq, last_hash)
        SELECT x.chain_id, x.org_id, x.kind, 0, repeat('0', 64)
        FROM jsonb_to_recordset(heads_in) AS x(chain_id text, org_id text, kind text)
        ORDER BY x.chain_id
        ON CONFLICT (chain_id) DO NOTHING;
    END IF;
    SELECT count(*),
        coalesce(bool_or(l.last_seq <> l.expect_seq OR l.last_hash <> l.expect_hash), false),
        coalesce(jsonb_agg(jsonb_build_object('chain_id', l.chain_id, 'last_seq', l.last_seq, 'last_hash', l.last_hash)
          ORDER BY l.chain_id), '[]'::jsonb)
      INTO locked_count, stale, heads
      FROM (
        SELECT c.chain_id, c.last_seq, c.last_hash, x.expect_seq, x.expect_hash
        FROM receipt_chains c
        JOIN jsonb_to_recordset(heads_in) AS x(chain_id text, expect_seq bigint, expect_hash text) ON x.chain_id = c.chain_id
        ORDER BY c.chain_id
        FOR UPDATE OF c
      ) l;
    IF locked_count < head_count THEN
      -- A chain the caller took for existing has no head row: it is at genesis, and the caller re-signs it as new.
      SELECT heads || coalesce(jsonb_agg(jsonb_build_object('chain_id', x.chain_id, 'last_seq', 0, 'last_hash', repeat('0', 64))), '[]'::jsonb)
        INTO heads
        FROM jsonb_to_recordset(heads_in) AS x(chain_id text)
        WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(heads) AS k(v) WHERE k.v->>'chain_id' = x.chain_id);
      stale := true;
    END IF;
    IF stale THEN
      RETURN jsonb_build_object('ok', false, 'heads', heads);
    END IF;
  END IF;

  IF durable OR debit <> 0 OR jsonb_array_length(coalesce(batch->'holds', '[]'::jsonb)) > 0 THEN
    WITH
      moved AS (
        UPDATE receipt_chains c SET last_seq = x.new_seq, last_hash = x.new_hash
        FROM jsonb_to_recordset(heads_in) AS x(chain_id text, new_seq bigint, new_hash text)
        WHERE c.chain_id = x.chain_id
      ),
      v2 AS (
        INSERT INTO receipts_v2 (jti, org_id, chain_id, seq, envelope)
        SELECT jti, org_id, chain_id, seq, envelope
        FROM jsonb_to_recordset(coalesce(batch->'receipts_v2', '[]'::jsonb))
          AS x(jti text, org_id text, chain_id text, seq bigint, envelope jsonb)
      ),
      v1 AS (
        INSERT INTO receipts_v1 (jti, org_id, account_id, chain_id, seq, model, capability, envelope)
        SELECT jti, org_id, account_id, chain_id, seq, model, capability, envelope
        FROM jsonb_to_recordset(coalesce(batch->'receipts_v1', '[]'::jsonb))
          AS x(jti text, org_id text, account_id text, chain_id text, seq bigint, model text, capability text, envelope jsonb)
      ),
      leaves AS (
        INSERT INTO transparency_pending (jti, receipt_hash)
        SELECT jti, receipt_hash FROM jsonb_to_recordset(coalesce(batch->'transparency', '[]'::jsonb)) AS x(jti text, receipt_hash text)
      ),
      usage AS (
        INSERT INTO usage_records (id, request_id, gateway_request_id, org_id, parent_org_id, key_id, provider, model, capability,
            key_mode, input_tokens, output_tokens, estimated, partial, upstream_cost_micros, billed_micros, markup_micros,
            receipt_jti, trace_id, started_at)
        SELECT id, request_id, gateway_request_id, org_id, parent_org_id, key_id, provider, model, capability,
          key_mode, input_tokens, output_tokens, estimated, partial, upstream_cost_micros, billed_micros, markup_micros,
          receipt_jti, trace_id, started_at
        FROM jsonb_to_recordset(coalesce(batch->'usage', '[]'::jsonb)) AS x(id text, request_id text, gateway_request_id text,
          org_id text, parent_org_id text, key_id text, provider text, model text, capability text, key_mode text,
          input_tokens integer, output_tokens integer, estimated boolean, partial boolean, upstream_cost_micros bigint,
          billed_micros bigint, markup_micros bigint, receipt_jti text, trace_id text, started_at timestamptz)
      ),
      ledger AS (
        INSERT INTO ledger_entries (org_id, kind, amount_micros, reference, usage_id)
        SELECT org_id, kind, amount_micros, reference, usage_id
        FROM jsonb_to_recordset(coalesce(batch->'ledger', '[]'::jsonb))
          AS x(org_id text, kind text, amount_micros bigint, reference text, usage_id text)
      ),
      released AS (
        DELETE FROM wallet_holds WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(coalesce(batch->'holds', '[]'::jsonb))))
        RETURNING amount_micros
      ),
      wallet AS (
        UPDATE wallets w SET balance_micros = w.balance_micros - debit, held_micros = w.held_micros - r.micros
        FROM (SELECT coalesce(sum(amount_micros), 0) AS micros FROM released) r
        WHERE w.org_id = org AND (debit <> 0 OR r.micros <> 0)
        RETURNING w.balance_micros AS after_balance,
          coalesce(w.low_balance_threshold_micros, (batch->>'low_balance_default_micros')::bigint) AS threshold
      )
    -- The batch's outbox events, and billing.low_balance once per downward crossing: the wallet row lock orders
    -- concurrent batches, so exactly one of them moves the balance from >= threshold to below it (a credit back
    -- above re-arms it).
    INSERT INTO outbox_events (id, org_id, event, data)
      SELECT id, org_id, event, data
      FROM jsonb_to_recordset(coalesce(batch->'outbox', '[]'::jsonb)) AS x(id text, org_id text, event text, data jsonb)
      UNION ALL
      SELECT gen_random_uuid()::text, org, 'billing.low_balance', jsonb_build_object(
          'balance_micros', w.after_balance,
          'balance_usd', relay_format_usd(w.after_balance),
          'threshold_micros', w.threshold,
          'threshold_usd', relay_format_usd(w.threshold))
      FROM wallet w
      WHERE debit > 0 AND w.after_balance < w.threshold AND w.after_balance + debit >= w.threshold;
  END IF;
  IF jsonb_array_length(coalesce(batch->'receipts_failed', '[]'::jsonb)) > 0 THEN
    INSERT INTO receipts_failed (jti, org_id, key_id, chain_id, seq, status, error_code, envelope)
      SELECT jti, org_id, key_id, chain_id, seq, status, error_code, envelope
      FROM jsonb_to_recordset(coalesce(batch->'receipts_failed', '[]'::jsonb))
        AS x(jti text, org_id text, key_id text, chain_id text, seq bigint, status integer, error_code text, envelope jsonb);
  END IF;
  -- New holds, in arrival order, each only while the wallet's available balance (balance minus holds) is positive.
  IF jsonb_array_length(coalesce(batch->'hold_requests', '[]'::jsonb)) > 0 THEN
    FOR h IN
      SELECT * FROM jsonb_to_recordset(batch->'hold_requests') AS x(id text, amount_micros bigint, expires_at timestamptz)
    LOOP
      UPDATE wallets SET held_micros = held_micros + h.amount_micros WHERE org_id = org AND balance_micros - held_micros > 0;
      IF FOUND THEN
        INSERT INTO wallet_holds (id, org_id, amount_micros, expires_at) VALUES (h.id, org, h.amount_micros, h.expires_at);
        granted := granted || to_jsonb(h.id);
      END IF;
    END LOOP;
  END IF;
  -- A batch of holds and releases only need not wait for the WAL flush: a hold lost to a database crash is a hold
  -- released, which a crash must do anyway. Receipts, usage and debits always wait for it.
  IF NOT durable THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  RETURN jsonb_build_object('ok', true, 'granted', granted);
END
$fn$`)
  yield* sql.unsafe(`
CREATE OR REPLACE FUNCTION relay_settle_many(batches jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  started_with text := current_setting('synchronous_commit');
  any_durable boolean := false;
  any_relaxed boolean := false;
  durable boolean;
  answers jsonb := '[]'::jsonb;
  current_kid text;
  b jsonb;
BEGIN
  -- Signed batches: under the shared lock a rotation takes exclusively, so the key read here stays current until
  -- this transaction commits (each statement of this volatile function reads what committed before it ran).
  IF jsonb_path_exists(batches, '$[*].kid ? (@ != null)') THEN
    PERFORM pg_advisory_xact_lock_shared(${RECEIPT_KEY_LOCK});
    SELECT kid INTO current_kid FROM receipt_signing_keys WHERE is_current;
  END IF;
  FOR i IN 0 .. jsonb_array_length(batches) - 1 LOOP
    b := batches->i;
    IF b->>'kid' IS NOT NULL AND b->>'kid' IS DISTINCT FROM current_kid THEN
      answers := answers || jsonb_build_array(jsonb_build_object('ok', false, 'current_kid', current_kid));
      CONTINUE;
    END IF;
    answers := answers || jsonb_build_array(relay_settle(b));
    durable := jsonb_array_length(coalesce(b->'heads', '[]'::jsonb)) > 0
      OR jsonb_array_length(coalesce(b->'usage', '[]'::jsonb)) > 0;
    any_durable := any_durable OR durable;
    any_relaxed := any_relaxed OR NOT durable;
  END LOOP;
  -- relay_settle turned synchronous_commit off for a batch of holds and releases only: put it back when another
  -- batch in this transaction must wait for the WAL flush (a round of durable batches only never changed it).
  IF any_durable AND any_relaxed THEN
    PERFORM set_config('synchronous_commit', started_with, true);
  END IF;
  RETURN answers;
END
$fn$`)
})
