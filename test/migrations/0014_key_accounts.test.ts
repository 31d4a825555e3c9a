// Migration 0014 repairs keys stored without an account (portal-created and rotated keys of earlier versions) so
// their calls are sealed, then makes the column NOT NULL. Run on a database migrated to 0013 with legacy rows in it.
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { layerPglite } from "../../layers/pg/SqlPglite.ts"
import { migrations } from "../../migrations/index.ts"
import { createTestStorage } from "../support/databases.ts"

const upTo0013 = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0014"))
const migrate = (record: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>) =>
  Migrator.make({})({ loader: Migrator.fromRecord(record as any) })

describe("migration 0014: every key has an account", () => {
  it("gives legacy keys the account their receipts belong to, and refuses a key without one from then on", async () => {
    const storage = await createTestStorage()
    const client = storage.env.DATABASE_URL === undefined
      ? layerPglite(undefined)
      : PgClient.layer({ url: Redacted.make(storage.env.DATABASE_URL) })
    try {
      const result = await Effect.runPromise(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrate(upTo0013)
        const key = (id: string, org: string, account: string | null, replacedBy: string | null = null) =>
          sql`INSERT INTO api_keys ${sql.insert({ id, org_id: org, account_id: account, key_hash: `h_${id}`, key_prefix: `svc_${id}`.slice(0, 10), tier: "free", status: replacedBy === null ? "active" : "rotated", replaced_by: replacedBy })}`
        const org = (id: string) => sql`INSERT INTO organisations ${sql.insert({ id, name: id })}`
        const account = (id: string, orgId: string, at: string) =>
          sql`INSERT INTO accounts ${sql.insert({ id, org_id: orgId, email: null, email_verified: false, created_at: at })}`
        // A self-service organisation whose key was rotated twice: the successors had no account.
        yield* org("org_self")
        yield* account("acct_self", "org_self", "2026-01-01T00:00:00Z")
        yield* key("k_gen3", "org_self", null)
        yield* key("k_gen2", "org_self", null, "k_gen3")
        yield* key("k_gen1", "org_self", "acct_self", "k_gen2")
        // A sign-up organisation with two homed accounts and a portal-created key: the oldest account.
        yield* org("org_signup")
        yield* account("acct_newer", "org_signup", "2026-03-01T00:00:00Z")
        yield* account("acct_older", "org_signup", "2026-02-01T00:00:00Z")
        yield* key("k_portal", "org_signup", null)
        // An organisation with a single owner homed elsewhere.
        yield* org("org_owned")
        yield* sql`INSERT INTO memberships ${sql.insert({ account_id: "acct_newer", org_id: "org_owned", role: "owner" })}`
        yield* key("k_owned", "org_owned", null)
        // An operator-made organisation (cli org create) with no account at all: two keys, one service account.
        yield* org("org_cli")
        yield* key("k_cli_a", "org_cli", null)
        yield* key("k_cli_b", "org_cli", null)

        yield* migrate(migrations)
        const keys = yield* sql<{ id: string; account_id: string }>`SELECT id, account_id FROM api_keys ORDER BY id`
        const cliAccounts = yield* sql<{ id: string; email: string | null }>`SELECT id, email FROM accounts WHERE org_id = 'org_cli'`
        const refused = yield* sql`INSERT INTO api_keys ${sql.insert({ id: "k_new", org_id: "org_cli", key_hash: "h_new", key_prefix: "svc_new", tier: "free" })}`.pipe(
          Effect.as("inserted"),
          Effect.catch(() => Effect.succeed("refused"))
        )
        return { keys: Object.fromEntries(keys.map((k) => [k.id, k.account_id])), cliAccounts, refused }
      }).pipe(Effect.provide(client as Layer.Layer<SqlClient.SqlClient>), Effect.scoped) as Effect.Effect<any>)

      expect(result.cliAccounts).toHaveLength(1)
      expect(result.cliAccounts[0]).toMatchObject({ id: expect.stringMatching(/^acct_[0-9a-f]{32}$/), email: null })
      expect(result.keys).toEqual({
        k_gen1: "acct_self",
        k_gen2: "acct_self",
        k_gen3: "acct_self",
        k_portal: "acct_older",
        k_owned: "acct_newer",
        k_cli_a: result.cliAccounts[0].id,
        k_cli_b: result.cliAccounts[0].id
      })
      expect(result.refused).toBe("refused")
    } finally {
      await storage.drop()
    }
  }, 120_000)
})
