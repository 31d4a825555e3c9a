import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

/**
 * The account a key minted by key management (portal, partner, rotation of a legacy key) is issued to. Its calls
 * are sealed into that account's v1 chain `tenant-<account_id>`, so every key must have one (api_keys.account_id is
 * NOT NULL since migration 0014; docs/decisions.md "Every key has an account").
 *
 * The organisation's receipt account is, in order: the oldest account homed in the organisation (the one that made
 * it: a self-service or sign-up account; an erased account keeps its anonymised row and so its chain), else its
 * oldest owner, else a service account created here for the organisation (no e-mail, no password: it cannot sign in
 * and only names the chain). Run inside the key's transaction: the organisation row is locked first, so two keys
 * minted at once for an organisation without accounts share one service account instead of making two.
 */
export const receiptAccountOf = (sql: SqlClient.SqlClient, orgId: string) =>
  Effect.gen(function*() {
    yield* sql`SELECT 1 FROM organisations WHERE id = ${orgId} FOR UPDATE`
    const found = yield* sql<{ id: string }>`
      SELECT id FROM (
        SELECT a.id, 0 AS rank, a.created_at FROM accounts a WHERE a.org_id = ${orgId}
        UNION ALL
        SELECT m.account_id, 1, m.created_at FROM memberships m WHERE m.org_id = ${orgId} AND m.role = 'owner'
      ) candidates ORDER BY rank, created_at, id LIMIT 1`
    if (found[0] !== undefined) return found[0].id
    const accountId = `acct_${crypto.randomUUID().replaceAll("-", "")}`
    yield* sql`INSERT INTO accounts ${sql.insert({ id: accountId, org_id: orgId, email: null, email_verified: false })}`
    return accountId
  })
