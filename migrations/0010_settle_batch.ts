import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * `relay_settle(batch jsonb)`: writes one organisation's batch of sealed receipts and metered calls in ONE statement
 * (one round trip, one commit, atomic on its own). The per-tenant sealing actor (layers/pg/ReceiptSealer.ts) signs
 * the receipts against the chain heads it expects, then calls this; the function locks those heads (in chain_id
 * order, so concurrent writers never deadlock), and only when every head is still what the caller expected does it
 * move the heads, insert the receipts, transparency leaves, usage records, ledger rows and outbox events, release
 * the holds and debit the wallet. When another gateway process moved a head first it writes nothing and answers
 * `{ok: false, heads}` with the current heads, so the caller re-signs and tries again: a chain can never fork.
 *
 * It also takes the batch's new wallet holds (`hold_requests`): each is granted, in arrival order, only while the
 * wallet's available balance (balance minus holds) is positive. A batch of holds and releases only commits without
 * waiting for the WAL flush (docs/decisions.md). Sections with nothing to write are skipped, so a small batch runs
 * only the statements it needs.
 *
 * batch: { org_id, low_balance_default_micros, heads: [{chain_id, org_id, kind, expect_seq, expect_hash, new_seq,
 * new_hash}], receipts_v2, receipts_v1, receipts_failed, transparency, usage, ledger, outbox: row arrays,
 * holds: [hold id released], hold_requests: [{id, amount_micros, expires_at}], debit_micros }.
 * Answers { ok: true, granted: [hold id] } or { ok: false, heads: [{chain_id, last_seq, last_hash}] }.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
CREATE OR REPLACE FUNCTION relay_settle(batch jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
  org text := batch->>'org_id';
  stale boolean := false;
  heads jsonb := '[]'::jsonb;
  cur record;
  released bigint := 0;
  debit bigint := coalesce((batch->>'debit_micros')::bigint, 0);
  after_balance bigint;
  threshold bigint;
  h record;
  granted jsonb := '[]'::jsonb;
  durable boolean := jsonb_array_length(coalesce(batch->'heads', '[]'::jsonb)) > 0
    OR jsonb_array_length(coalesce(batch->'usage', '[]'::jsonb)) > 0;
BEGIN
  IF jsonb_array_length(coalesce(batch->'heads', '[]'::jsonb)) > 0 THEN
    INSERT INTO receipt_chains (chain_id, org_id, kind, last_seq, last_hash)
      SELECT x.chain_id, x.org_id, x.kind, 0, repeat('0', 64)
      FROM jsonb_to_recordset(coalesce(batch->'heads', '[]'::jsonb)) AS x(chain_id text, org_id text, kind text)
      ORDER BY x.chain_id
      ON CONFLICT (chain_id) DO NOTHING;
    FOR cur IN
      SELECT c.chain_id, c.last_seq, c.last_hash, x.expect_seq, x.expect_hash
      FROM receipt_chains c
      JOIN jsonb_to_recordset(coalesce(batch->'heads', '[]'::jsonb)) AS x(chain_id text, expect_seq bigint, expect_hash text)
        ON x.chain_id = c.chain_id
      ORDER BY c.chain_id
      FOR UPDATE OF c
    LOOP
      heads := heads || jsonb_build_object('chain_id', cur.chain_id, 'last_seq', cur.last_seq, 'last_hash', cur.last_hash);
      IF cur.last_seq <> cur.expect_seq OR cur.last_hash <> cur.expect_hash THEN
        stale := true;
      END IF;
    END LOOP;
    IF stale THEN
      RETURN jsonb_build_object('ok', false, 'heads', heads);
    END IF;

    UPDATE receipt_chains c SET last_seq = x.new_seq, last_hash = x.new_hash
      FROM jsonb_to_recordset(coalesce(batch->'heads', '[]'::jsonb)) AS x(chain_id text, new_seq bigint, new_hash text)
      WHERE c.chain_id = x.chain_id;
  END IF;
  IF jsonb_array_length(coalesce(batch->'receipts_v2', '[]'::jsonb)) > 0 THEN
    INSERT INTO receipts_v2 (jti, org_id, chain_id, seq, envelope)
      SELECT jti, org_id, chain_id, seq, envelope
      FROM jsonb_to_recordset(coalesce(batch->'receipts_v2', '[]'::jsonb))
        AS x(jti text, org_id text, chain_id text, seq bigint, envelope jsonb);
  END IF;
  IF jsonb_array_length(coalesce(batch->'receipts_v1', '[]'::jsonb)) > 0 THEN
    INSERT INTO receipts_v1 (jti, org_id, account_id, chain_id, seq, model, capability, envelope)
      SELECT jti, org_id, account_id, chain_id, seq, model, capability, envelope
      FROM jsonb_to_recordset(coalesce(batch->'receipts_v1', '[]'::jsonb))
        AS x(jti text, org_id text, account_id text, chain_id text, seq bigint, model text, capability text, envelope jsonb);
  END IF;
  IF jsonb_array_length(coalesce(batch->'receipts_failed', '[]'::jsonb)) > 0 THEN
    INSERT INTO receipts_failed (jti, org_id, key_id, chain_id, seq, status, error_code, envelope)
      SELECT jti, org_id, key_id, chain_id, seq, status, error_code, envelope
      FROM jsonb_to_recordset(coalesce(batch->'receipts_failed', '[]'::jsonb))
        AS x(jti text, org_id text, key_id text, chain_id text, seq bigint, status integer, error_code text, envelope jsonb);
  END IF;
  IF jsonb_array_length(coalesce(batch->'transparency', '[]'::jsonb)) > 0 THEN
    INSERT INTO transparency_pending (jti, receipt_hash)
      SELECT jti, receipt_hash FROM jsonb_to_recordset(coalesce(batch->'transparency', '[]'::jsonb)) AS x(jti text, receipt_hash text);
  END IF;
  IF jsonb_array_length(coalesce(batch->'usage', '[]'::jsonb)) > 0 THEN
    INSERT INTO usage_records (id, request_id, gateway_request_id, org_id, parent_org_id, key_id, provider, model, capability,
        key_mode, input_tokens, output_tokens, estimated, partial, upstream_cost_micros, billed_micros, markup_micros,
        receipt_jti, trace_id, started_at)
      SELECT id, request_id, gateway_request_id, org_id, parent_org_id, key_id, provider, model, capability,
        key_mode, input_tokens, output_tokens, estimated, partial, upstream_cost_micros, billed_micros, markup_micros,
        receipt_jti, trace_id, started_at
      FROM jsonb_to_recordset(coalesce(batch->'usage', '[]'::jsonb)) AS x(id text, request_id text, gateway_request_id text,
        org_id text, parent_org_id text, key_id text, provider text, model text, capability text, key_mode text,
        input_tokens integer, output_tokens integer, estimated boolean, partial boolean, upstream_cost_micros bigint,
        billed_micros bigint, markup_micros bigint, receipt_jti text, trace_id text, started_at timestamptz);
  END IF;
  IF jsonb_array_length(coalesce(batch->'ledger', '[]'::jsonb)) > 0 THEN
    INSERT INTO ledger_entries (org_id, kind, amount_micros, reference, usage_id)
      SELECT org_id, kind, amount_micros, reference, usage_id
      FROM jsonb_to_recordset(coalesce(batch->'ledger', '[]'::jsonb))
        AS x(org_id text, kind text, amount_micros bigint, reference text, usage_id text);
  END IF;
  IF jsonb_array_length(coalesce(batch->'outbox', '[]'::jsonb)) > 0 THEN
    INSERT INTO outbox_events (id, org_id, event, data)
      SELECT id, org_id, event, data
      FROM jsonb_to_recordset(coalesce(batch->'outbox', '[]'::jsonb)) AS x(id text, org_id text, event text, data jsonb);
  END IF;

  IF jsonb_array_length(coalesce(batch->'holds', '[]'::jsonb)) > 0 THEN
    WITH gone AS (
      DELETE FROM wallet_holds WHERE id IN (SELECT jsonb_array_elements_text(coalesce(batch->'holds', '[]'::jsonb)))
      RETURNING amount_micros
    )
    SELECT coalesce(sum(amount_micros), 0) INTO released FROM gone;
  END IF;
  IF debit <> 0 OR released <> 0 THEN
    UPDATE wallets SET balance_micros = balance_micros - debit, held_micros = held_micros - released
      WHERE org_id = org
      RETURNING balance_micros, low_balance_threshold_micros INTO after_balance, threshold;
    -- billing.low_balance once per downward crossing: the wallet row lock orders concurrent batches, so exactly one
    -- of them moves the balance from >= threshold to below it (a credit back above re-arms it).
    IF FOUND AND debit > 0 THEN
      threshold := coalesce(threshold, (batch->>'low_balance_default_micros')::bigint);
      IF after_balance < threshold AND after_balance + debit >= threshold THEN
        INSERT INTO outbox_events (id, org_id, event, data) VALUES (gen_random_uuid()::text, org, 'billing.low_balance',
          jsonb_build_object(
            'balance_micros', after_balance,
            'balance_usd', relay_format_usd(after_balance),
            'threshold_micros', threshold,
            'threshold_usd', relay_format_usd(threshold)));
      END IF;
    END IF;
  END IF;
  -- New holds, in arrival order, each only while the wallet's available balance (balance minus holds) is positive.
  FOR h IN
    SELECT * FROM jsonb_to_recordset(coalesce(batch->'hold_requests', '[]'::jsonb))
      AS x(id text, amount_micros bigint, expires_at timestamptz)
  LOOP
    UPDATE wallets SET held_micros = held_micros + h.amount_micros WHERE org_id = org AND balance_micros - held_micros > 0;
    IF FOUND THEN
      INSERT INTO wallet_holds (id, org_id, amount_micros, expires_at) VALUES (h.id, org, h.amount_micros, h.expires_at);
      granted := granted || to_jsonb(h.id);
    END IF;
  END LOOP;
  -- A batch of holds and releases only need not wait for the WAL flush: a hold lost to a database crash is a hold
  -- released, which a crash must do anyway. Receipts, usage and debits always wait for it.
  IF NOT durable THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  RETURN jsonb_build_object('ok', true, 'granted', granted);
END
$fn$`)
  // The same text as src/billing/money.ts formatUsd: "-12.345678".
  yield* sql.unsafe(`
CREATE OR REPLACE FUNCTION relay_format_usd(micros bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT CASE WHEN micros < 0 THEN '-' ELSE '' END || (abs(micros) / 1000000)::text || '.' || lpad((abs(micros) % 1000000)::text, 6, '0')
$fn$`)
})
