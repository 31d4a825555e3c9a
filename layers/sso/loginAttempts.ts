import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { base64UrlRandom } from "../pg/randomToken.ts"

/** How long a sign-in may take at the IdP before it must be started again. */
export const ATTEMPT_TTL_MS = 10 * 60_000

export interface LoginAttempt {
  readonly org_id: string
  readonly protocol: "oidc" | "saml"
  readonly state: string | null
  readonly nonce: string | null
  readonly code_verifier: string | null
  readonly request_id: string | null
}

/**
 * Sign-ins under way, keyed by the SHA-256 of the random value in the browser's `pr_sso` cookie (the value itself
 * is not stored). Expired rows are dropped whenever a sign-in starts.
 */
export const saveAttempt = (sql: SqlClient.SqlClient, values: Omit<LoginAttempt, "state" | "nonce" | "code_verifier" | "request_id"> & Partial<LoginAttempt>) =>
  Effect.gen(function*() {
    const attempt = base64UrlRandom(32)
    yield* sql`DELETE FROM sso_login_attempts WHERE expires_at < now()`
    yield* sql`INSERT INTO sso_login_attempts ${
      sql.insert({
        cookie_hash: sha256HexSync(attempt),
        org_id: values.org_id,
        protocol: values.protocol,
        state: values.state ?? null,
        nonce: values.nonce ?? null,
        code_verifier: values.code_verifier ?? null,
        request_id: values.request_id ?? null,
        expires_at: new Date(Date.now() + ATTEMPT_TTL_MS).toISOString()
      })
    }`
    return attempt
  }).pipe(Effect.orDie)

/** Takes the attempt (deleted: each is used once, whatever the outcome); undefined when unknown, used or expired. */
export const takeAttempt = (sql: SqlClient.SqlClient, input: { readonly attempt: string | undefined; readonly orgId: string; readonly protocol: "oidc" | "saml" }) =>
  Effect.gen(function*() {
    if (input.attempt === undefined || input.attempt === "") return undefined
    const rows = yield* sql<LoginAttempt & { live: boolean }>`
      DELETE FROM sso_login_attempts WHERE cookie_hash = ${sha256HexSync(input.attempt)}
      RETURNING org_id, protocol, state, nonce, code_verifier, request_id, expires_at > now() AS live`
    const row = rows[0]
    return row !== undefined && row.live && row.org_id === input.orgId && row.protocol === input.protocol ? row : undefined
  }).pipe(Effect.orDie)
