import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * `relay_settle` joins each batch's rows (from `jsonb_to_recordset`, which the planner always estimates at 100 rows)
 * with `receipt_chains` and `wallet_holds`. With a few thousand chains the planner then prefers a hash join over a
 * sequential scan of the whole table, twice per batch, under the tenant's chain locks (measured: 1.4 ms per scan at
 * 8,000 chains, 2.4 ms at 15,000; it switches back to index probes only past ~25,000). Every join in the function is
 * driven by the batch, a handful of rows, so index probes in nested loops are always the right plan: the function
 * runs with hash and merge joins off. (A function's SET clause restores only its own variables at exit, checked: the
 * function's `set_config('synchronous_commit', 'off', true)` for hold-only batches still holds for the transaction.)
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER FUNCTION relay_settle(jsonb) SET enable_hashjoin = off`
  yield* sql`ALTER FUNCTION relay_settle(jsonb) SET enable_mergejoin = off`
})
