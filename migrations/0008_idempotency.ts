import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Stored 2xx responses of idempotent requests (24 h), keyed by (scope, key): scope = organisation + route. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE idempotency_records (
    scope text NOT NULL,
    idempotency_key text NOT NULL,
    body_hash text NOT NULL,
    status integer NOT NULL,
    headers jsonb NOT NULL,
    body_base64 text NOT NULL,
    streamed boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (scope, idempotency_key)
  )`
  yield* sql`CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at)`
})
