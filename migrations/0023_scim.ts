import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * SCIM 2.0 provisioning (docs/sso.md, "SCIM"): an organisation's identity provider creates, changes and removes its
 * people and groups through `/scim/v2`.
 *
 * - `scim_tokens`: the bearer tokens the operator issues per organisation (`cli.ts sso scim-token issue`), stored as
 *   their SHA-256 like portal tokens; revoked, never deleted.
 * - `scim_users`: which accounts an organisation's IdP provisioned, with the attributes it sent that the gateway
 *   keeps (userName, externalId, name, displayName); `active = false` is a deactivated person (null: the IdP never
 *   said, which counts as active).
 * - `scim_groups` / `scim_group_members`: the IdP's groups and who is in them; a group's `role` (from its name) is
 *   the organisation role it gives its members.
 * - `memberships.suspended_at`: a SCIM-deactivated membership; such a membership signs nobody in and is not an owner.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE scim_tokens (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    token_hash text NOT NULL UNIQUE,
    token_prefix text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX scim_tokens_org ON scim_tokens (org_id)`
  yield* sql`CREATE TABLE scim_users (
    org_id text NOT NULL REFERENCES organisations(id),
    account_id text NOT NULL REFERENCES accounts(id),
    user_name text NOT NULL,
    external_id text,
    given_name text,
    family_name text,
    display_name text,
    email_type text,
    email_primary boolean,
    active boolean,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, account_id)
  )`
  yield* sql`CREATE UNIQUE INDEX scim_users_user_name ON scim_users (org_id, lower(user_name))`
  yield* sql`CREATE TABLE scim_groups (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES organisations(id),
    display_name text NOT NULL,
    external_id text,
    role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX scim_groups_display_name ON scim_groups (org_id, lower(display_name))`
  yield* sql`CREATE TABLE scim_group_members (
    group_id text NOT NULL REFERENCES scim_groups(id) ON DELETE CASCADE,
    account_id text NOT NULL REFERENCES accounts(id),
    PRIMARY KEY (group_id, account_id)
  )`
  yield* sql`ALTER TABLE memberships ADD COLUMN suspended_at timestamptz`
})
