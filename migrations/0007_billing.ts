import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Billing (docs/billing.md): payment checkouts credited exactly once, licence redemptions (once per licence id),
 * per-organisation limit and quota overrides, and an optional per-organisation low-balance threshold.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One row per checkout intent; `status` moves pending -> completed exactly once (the conditional UPDATE that
  // credits the wallet), whatever number of times the provider delivers its webhook.
  yield* sql`CREATE TABLE payments (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    provider text NOT NULL CHECK (provider IN ('stripe', 'dev')),
    provider_ref text,
    amount_micros bigint NOT NULL CHECK (amount_micros > 0),
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed')),
    payment_ref text UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz
  )`
  yield* sql`CREATE INDEX payments_org ON payments (org_id, created_at)`
  // A second line of defence: one top-up ledger row per payment reference.
  yield* sql`CREATE UNIQUE INDEX ledger_entries_topup_once ON ledger_entries (reference) WHERE kind = 'topup'`
  yield* sql`CREATE TABLE licence_redemptions (
    licence_id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    amount_micros bigint NOT NULL,
    issued_at timestamptz NOT NULL,
    redeemed_at timestamptz NOT NULL DEFAULT now()
  )`
  // Overrides of the tier defaults for one organisation; capability '*' applies to every capability.
  // NULL columns keep the tier default.
  yield* sql`CREATE TABLE org_limits (
    org_id text NOT NULL REFERENCES organisations(id),
    capability text NOT NULL,
    monthly_tokens bigint,
    per60 integer,
    per3600 integer,
    PRIMARY KEY (org_id, capability)
  )`
  yield* sql`ALTER TABLE wallets ADD COLUMN low_balance_threshold_micros bigint`
})
