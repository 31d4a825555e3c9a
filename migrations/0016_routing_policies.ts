import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * An organisation's routing policy: the ordered fallback models (`model` or `provider/model`) a relay call moves to
 * when the requested one fails before its first byte (docs/routing.md, "Fallbacks").
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE org_routing_policies (
    org_id text PRIMARY KEY REFERENCES organisations(id) ON DELETE CASCADE,
    fallbacks jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
})
