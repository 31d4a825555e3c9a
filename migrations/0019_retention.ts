import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Retention (docs/deployment.md, "Retention"): RETENTION_DAYS drops receipts, usage records and finished webhook
 * deliveries older than that many days. A receipt chain keeps verifying from where its dropped part ends: one anchor
 * per chain holds the last dropped receipt (its signed envelope, so the verifier checks it like any receipt, and its
 * hash, which the next stored receipt's prev_hash must equal). Each run is recorded with its cutoff and counts; the
 * newest cutoff tells a receipt removed by retention (410 receipt_expired) from one that never existed (404).
 * Indexes on the time columns keep each run to the rows it removes. Why deletes and not partitions: docs/decisions.md.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE receipt_chain_anchors (
    chain_id text PRIMARY KEY,
    org_id text NOT NULL,
    seq bigint NOT NULL,
    hash text NOT NULL,
    envelope jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE retention_runs (
    id bigserial PRIMARY KEY,
    cutoff timestamptz NOT NULL,
    actor text NOT NULL,
    counts jsonb NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX receipts_v2_created ON receipts_v2 (created_at)`
  yield* sql`CREATE INDEX receipts_v1_created ON receipts_v1 (created_at)`
  yield* sql`CREATE INDEX receipts_failed_created ON receipts_failed (created_at)`
  yield* sql`CREATE INDEX usage_records_receipt ON usage_records (receipt_jti) WHERE receipt_jti IS NOT NULL`
  yield* sql`CREATE INDEX usage_records_unsealed_finished ON usage_records (finished_at) WHERE receipt_jti IS NULL`
  yield* sql`CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status IN ('delivered', 'dead')`
})
