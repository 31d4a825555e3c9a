import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * BYOK provider credentials, one per (organisation, provider). `ciphertext` is an `aead1.` envelope (AES-256-GCM
 * under the KEK, additional data `byok:<org>:<provider>`); the plaintext key is never stored. `last4` is kept in
 * clear so listing needs no decryption.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE byok_credentials (
    org_id text NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    provider text NOT NULL,
    ciphertext text NOT NULL,
    last4 text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, provider)
  )`
})
