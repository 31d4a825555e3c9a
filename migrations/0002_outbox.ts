import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The transactional outbox: every event is written in the same transaction as the change that caused it; the
 * webhook dispatcher fans it out to subscribed endpoints later (`fanned_out_at`).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE outbox_events (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    event text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    fanned_out_at timestamptz
  )`
  yield* sql`CREATE INDEX outbox_events_pending ON outbox_events (created_at) WHERE fanned_out_at IS NULL`
  yield* sql`CREATE INDEX outbox_events_org ON outbox_events (org_id, created_at)`
})
