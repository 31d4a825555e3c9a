import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Organisations, accounts, gateway keys, portal tokens, wallets, ledger and the audit log. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE organisations (
    id text PRIMARY KEY,
    name text NOT NULL,
    parent_id text REFERENCES organisations(id),
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE accounts (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    email text,
    email_verified boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX accounts_email_unique ON accounts (lower(email)) WHERE email IS NOT NULL`
  yield* sql`CREATE TABLE api_keys (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    account_id text REFERENCES accounts(id),
    key_hash text NOT NULL UNIQUE,
    key_prefix text NOT NULL,
    tier text NOT NULL,
    name text,
    permissions jsonb,
    models jsonb,
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked', 'rotated')),
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX api_keys_org ON api_keys (org_id)`
  yield* sql`CREATE INDEX api_keys_prefix ON api_keys (key_prefix)`
  yield* sql`CREATE TABLE portal_tokens (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    token_hash text NOT NULL UNIQUE,
    token_prefix text NOT NULL,
    name text,
    abilities jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
  )`
  yield* sql`CREATE TABLE wallets (
    org_id text PRIMARY KEY REFERENCES organisations(id),
    balance_micros bigint NOT NULL DEFAULT 0
  )`
  yield* sql`CREATE TABLE ledger_entries (
    id bigserial PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    kind text NOT NULL CHECK (kind IN ('debit', 'topup', 'trial_credit', 'licence_credit', 'adjustment')),
    amount_micros bigint NOT NULL,
    reference text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX ledger_entries_org ON ledger_entries (org_id, id)`
  yield* sql`CREATE TABLE audit_log (
    id bigserial PRIMARY KEY,
    actor text NOT NULL,
    action text NOT NULL,
    target text,
    details jsonb,
    at timestamptz NOT NULL DEFAULT now()
  )`
})
