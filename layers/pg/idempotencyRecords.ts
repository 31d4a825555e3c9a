import { IDEMPOTENCY_TTL_MS, type StoredResponse } from "../../services/Idempotency.ts"

/**
 * An idempotency_records row as written, in the JSON shape `jsonb_to_recordset` reads. Written by the idempotency
 * layer (responses of routes that do not settle a relay call) and by the sealing actor (a relay call's response,
 * in the statement that settles it).
 */
export interface StoredRow {
  readonly scope: string
  readonly idempotency_key: string
  readonly body_hash: string
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body_base64: string
  readonly streamed: boolean
  readonly created_at: string
  readonly expires_at: string
}

/** The row for `response` stored at `atMs` (epoch ms); it expires 24 h later. */
export const storedRow = (
  record: { readonly scope: string; readonly key: string; readonly bodyHash: string },
  response: StoredResponse,
  atMs: number
): StoredRow => ({
  scope: record.scope,
  idempotency_key: record.key,
  body_hash: record.bodyHash,
  status: response.status,
  headers: response.headers,
  body_base64: Buffer.from(response.body).toString("base64"),
  streamed: response.streamed,
  created_at: new Date(atMs).toISOString(),
  expires_at: new Date(atMs + IDEMPOTENCY_TTL_MS).toISOString()
})

/** Columns of idempotency_records in StoredRow order. */
export const STORED_COLUMNS = "scope, idempotency_key, body_hash, status, headers, body_base64, streamed, created_at, expires_at"

/** The `AS x(...)` column definitions for `jsonb_to_recordset` over StoredRow JSON. */
export const STORED_RECORDSET = `x(scope text, idempotency_key text, body_hash text, status integer, headers jsonb, body_base64 text,
  streamed boolean, created_at timestamptz, expires_at timestamptz)`

/**
 * The same with the index of the settlement batch it belongs to first (`batch`): the sealing actor writes several
 * tenants' batches in one statement and stores a response only when its own batch was written.
 */
export const STORED_RECORDSET_IN_BATCH = `x(batch integer, scope text, idempotency_key text, body_hash text, status integer, headers jsonb,
  body_base64 text, streamed boolean, created_at timestamptz, expires_at timestamptz)`

/**
 * An expired record with the same key is replaced: after 24 h the key is fresh. One writer per key at a time (it
 * holds the key's slot), so one statement never holds the same key twice.
 */
export const STORED_UPSERT = `ON CONFLICT (scope, idempotency_key) DO UPDATE SET
  body_hash = EXCLUDED.body_hash, status = EXCLUDED.status, headers = EXCLUDED.headers,
  body_base64 = EXCLUDED.body_base64, streamed = EXCLUDED.streamed,
  created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`
