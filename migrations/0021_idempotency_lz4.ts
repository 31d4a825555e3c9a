import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Stored responses are compressed with lz4 instead of pglz (issue 41, issue 34's Speed item). A stored response is
 * written inside the statement that settles its call, before the client is answered, and a streamed answer's
 * transcript (base64, 5-10 KB) is over the 2 KB at which PostgreSQL compresses a value: with pglz that cost ~140 µs
 * per chat stream and ~390 µs per Responses stream server-side, with lz4 ~60 and ~120 µs (2,000-row insert loops on
 * PostgreSQL 15, docs/benchmark.md). Only new rows are written with lz4; both kinds read alike. A server built
 * without lz4 (and PGlite) answers feature_not_supported and keeps pglz.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`DO $$
BEGIN
  ALTER TABLE idempotency_records ALTER COLUMN body_base64 SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END
$$`)
})
