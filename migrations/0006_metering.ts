import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Metering: one usage record per completed relay call, and wallet holds that bound concurrent spending
 * (docs/billing.md: a wallet can go below zero by at most the overshoot of calls admitted while it was positive).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE wallets ADD COLUMN held_micros bigint NOT NULL DEFAULT 0`
  yield* sql`CREATE TABLE wallet_holds (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    amount_micros bigint NOT NULL CHECK (amount_micros >= 0),
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX wallet_holds_expiry ON wallet_holds (expires_at)`
  yield* sql`CREATE TABLE usage_records (
    id text PRIMARY KEY,
    request_id text NOT NULL,
    gateway_request_id text NOT NULL,
    org_id text NOT NULL REFERENCES organisations(id),
    parent_org_id text,
    key_id text NOT NULL,
    provider text NOT NULL,
    model text NOT NULL,
    capability text NOT NULL,
    key_mode text NOT NULL CHECK (key_mode IN ('pooled', 'byok')),
    input_tokens integer NOT NULL,
    output_tokens integer NOT NULL,
    estimated boolean NOT NULL DEFAULT false,
    partial boolean NOT NULL DEFAULT false,
    upstream_cost_micros bigint NOT NULL,
    billed_micros bigint NOT NULL,
    markup_micros bigint NOT NULL,
    receipt_jti text,
    trace_id text NOT NULL,
    started_at timestamptz NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX usage_records_org ON usage_records (org_id, finished_at)`
  yield* sql`ALTER TABLE ledger_entries ADD COLUMN usage_id text`
  yield* sql`CREATE UNIQUE INDEX ledger_entries_usage ON ledger_entries (usage_id) WHERE usage_id IS NOT NULL`
})
