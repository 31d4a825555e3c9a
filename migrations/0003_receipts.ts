import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Receipts (docs/receipts.md): signing keys (private keys AES-256-GCM encrypted under the KEK), the chain heads
 * that serialise `seq` per chain across processes, the three receipt tables (UNIQUE (chain_id, seq): two gateways
 * can never fork a chain), the transparency log and the chain verifier's incidents.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE receipt_signing_keys (
    kid text PRIMARY KEY,
    public_jwk jsonb NOT NULL,
    private_key_enc text,
    source text NOT NULL CHECK (source IN ('generated', 'file')),
    is_current boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    retired_at timestamptz
  )`
  yield* sql`CREATE UNIQUE INDEX receipt_signing_keys_one_current ON receipt_signing_keys (is_current) WHERE is_current`
  yield* sql`CREATE TABLE receipt_chains (
    chain_id text PRIMARY KEY,
    org_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('v2', 'v1', 'failed')),
    last_seq bigint NOT NULL DEFAULT 0,
    last_hash text NOT NULL
  )`
  yield* sql`CREATE TABLE receipts_v2 (
    jti text PRIMARY KEY,
    org_id text NOT NULL,
    chain_id text NOT NULL,
    seq bigint NOT NULL,
    envelope jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chain_id, seq)
  )`
  yield* sql`CREATE INDEX receipts_v2_hashes ON receipts_v2 (org_id, (envelope->>'hash_upstream_request'))`
  yield* sql`CREATE TABLE receipts_v1 (
    jti text PRIMARY KEY,
    org_id text NOT NULL,
    account_id text NOT NULL,
    chain_id text NOT NULL,
    seq bigint NOT NULL,
    model text NOT NULL,
    capability text NOT NULL,
    envelope jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chain_id, seq)
  )`
  yield* sql`CREATE INDEX receipts_v1_org_list ON receipts_v1 (org_id, created_at DESC, jti DESC)`
  yield* sql`CREATE TABLE receipts_failed (
    jti text PRIMARY KEY,
    org_id text NOT NULL,
    key_id text NOT NULL,
    chain_id text NOT NULL,
    seq bigint NOT NULL,
    status integer NOT NULL,
    error_code text NOT NULL,
    envelope jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chain_id, seq)
  )`
  yield* sql`CREATE TABLE transparency_pending (
    jti text PRIMARY KEY,
    receipt_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE transparency_leaves (
    leaf_index bigint PRIMARY KEY,
    jti text NOT NULL UNIQUE,
    receipt_hash text NOT NULL,
    leaf_hash text NOT NULL,
    sequenced_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE transparency_log (
    id integer PRIMARY KEY CHECK (id = 1),
    tree_size bigint NOT NULL
  )`
  yield* sql`INSERT INTO transparency_log (id, tree_size) VALUES (1, 0)`
  yield* sql`CREATE TABLE chain_incidents (
    id bigserial PRIMARY KEY,
    chain_id text NOT NULL,
    org_id text NOT NULL,
    seq bigint,
    reason text NOT NULL,
    detected_at timestamptz NOT NULL DEFAULT now(),
    repaired_at timestamptz
  )`
  yield* sql`CREATE UNIQUE INDEX chain_incidents_open ON chain_incidents (chain_id) WHERE repaired_at IS NULL`
})
