import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Accounts (passwords, memberships, e-mail verification, trial credit once), portal sessions, the development
 * mail outbox, key rotation policy, the append-only audit log, and the OIDC provider's storage.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE accounts ADD COLUMN password_hash text`
  yield* sql`ALTER TABLE accounts ADD COLUMN deleted_at timestamptz`
  yield* sql`CREATE TABLE memberships (
    account_id text NOT NULL REFERENCES accounts(id),
    org_id text NOT NULL REFERENCES organisations(id),
    role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, org_id)
  )`
  yield* sql`CREATE INDEX memberships_org ON memberships (org_id)`
  yield* sql`CREATE TABLE email_verifications (
    token_hash text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`
  yield* sql`CREATE INDEX email_verifications_account ON email_verifications (account_id)`
  // One trial credit per account, whatever happens: the primary key here and a unique ledger reference.
  yield* sql`CREATE TABLE trial_credits (
    account_id text PRIMARY KEY REFERENCES accounts(id),
    org_id text NOT NULL REFERENCES organisations(id),
    amount_micros bigint NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX ledger_entries_trial_once ON ledger_entries (reference) WHERE kind = 'trial_credit'`
  yield* sql`CREATE TABLE mail_outbox (
    id bigserial PRIMARY KEY,
    to_address text NOT NULL,
    subject text NOT NULL,
    body_text text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE portal_sessions (
    id text PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    csrf_hash text NOT NULL,
    account_id text NOT NULL REFERENCES accounts(id),
    org_id text NOT NULL REFERENCES organisations(id),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX portal_sessions_account ON portal_sessions (account_id)`
  yield* sql`ALTER TABLE api_keys ADD COLUMN rotation_days integer CHECK (rotation_days BETWEEN 1 AND 3650)`
  yield* sql`ALTER TABLE api_keys ADD COLUMN rotation_due_at timestamptz`
  yield* sql`ALTER TABLE api_keys ADD COLUMN replaced_by text`
  yield* sql`ALTER TABLE audit_log ADD COLUMN org_id text`
  yield* sql`CREATE INDEX audit_log_org ON audit_log (org_id, id)`
  // Append-only: history cannot be rewritten by the application (an operator with DDL rights still can).
  yield* sql`CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$`
  yield* sql`CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`
  yield* sql`CREATE TABLE oidc_payloads (
    model text NOT NULL,
    id text NOT NULL,
    payload jsonb NOT NULL,
    grant_id text,
    user_code text,
    uid text,
    expires_at timestamptz,
    consumed_at timestamptz,
    PRIMARY KEY (model, id)
  )`
  yield* sql`CREATE INDEX oidc_payloads_grant ON oidc_payloads (grant_id) WHERE grant_id IS NOT NULL`
  yield* sql`CREATE INDEX oidc_payloads_uid ON oidc_payloads (uid) WHERE uid IS NOT NULL`
  yield* sql`CREATE TABLE oidc_signing_keys (
    kid text PRIMARY KEY,
    private_jwk jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
})
