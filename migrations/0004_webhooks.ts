import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Webhook endpoints, deliveries (one row per event and endpoint, test and replay rows included) and attempts
 * (one row per HTTP attempt; its id is the X-Service-Webhook-Delivery-Id of that attempt). docs/webhooks.md.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE webhook_endpoints (
    id bigserial PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    url text NOT NULL,
    events jsonb NOT NULL,
    secret_envelope text NOT NULL,
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    paused_reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, id)`
  yield* sql`CREATE TABLE webhook_deliveries (
    id bigserial PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    endpoint_id bigint NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event text NOT NULL,
    event_id text NOT NULL,
    data jsonb NOT NULL,
    replay_of bigint REFERENCES webhook_deliveries(id) ON DELETE SET NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'delivered', 'dead')),
    attempt_count integer NOT NULL DEFAULT 0,
    last_http_code integer,
    last_error text,
    next_attempt_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz,
    UNIQUE (event_id, endpoint_id)
  )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'retrying')`
  yield* sql`CREATE INDEX webhook_deliveries_org ON webhook_deliveries (org_id, id)`
  yield* sql`CREATE TABLE webhook_attempts (
    id bigserial PRIMARY KEY,
    delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt integer NOT NULL CHECK (attempt BETWEEN 1 AND 7),
    http_code integer,
    error text,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    duration_ms integer,
    UNIQUE (delivery_id, attempt)
  )`
})
