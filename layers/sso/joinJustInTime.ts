import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Role } from "../../services/Accounts.ts"
import type { Outbox } from "../../services/Outbox.ts"
import { SsoRejected } from "../../services/SsoSignIn.ts"
import { newAccountId } from "../pg/Accounts.ts"
import { appendAudit } from "../pg/audit.ts"

/** Who the IdP vouched for. `subject` is stable for the IdP (prefixed with the protocol and the IdP's identity). */
export interface VouchedPerson {
  readonly protocol: "oidc" | "saml"
  readonly subject: string
  readonly email: string
}

/**
 * The account the IdP's person signs in as, made or joined just in time, in one transaction:
 * 1. the account linked to this subject before (the e-mail may have changed at the IdP since);
 * 2. else the account with this e-mail address when it already belongs to this organisation (made there or a
 *    member): it is linked. An account of another organisation is refused (`account_elsewhere`), so an IdP cannot
 *    take over a person's account elsewhere by asserting their address;
 * 3. else a new account (e-mail verified: the IdP vouches for it; no password) with the configured role.
 * A linked account that is no longer a member joins again with the configured role. Audit `sso.sign_in`; events
 * `user.created` / `org.member_added` through the outbox, as for an invitation.
 */
export const joinJustInTime = (
  sql: SqlClient.SqlClient,
  outbox: Outbox["Service"],
  input: { readonly orgId: string; readonly person: VouchedPerson; readonly jitRole: Role }
) =>
  sql.withTransaction(Effect.gen(function*() {
    const { orgId, person, jitRole } = input
    const actor = `sso:${person.protocol}`
    const linked = yield* sql<{ account_id: string; home: string }>`
      SELECT i.account_id, a.org_id AS home FROM sso_identities i JOIN accounts a ON a.id = i.account_id AND a.deleted_at IS NULL
      WHERE i.org_id = ${orgId} AND i.subject = ${person.subject} FOR UPDATE OF a`
    let accountId = linked[0]?.account_id
    let home = linked[0]?.home
    let created = false
    if (accountId === undefined) {
      const byEmail = yield* sql<{ id: string; org_id: string; member: boolean }>`
        SELECT a.id, a.org_id, EXISTS (SELECT 1 FROM memberships m WHERE m.account_id = a.id AND m.org_id = ${orgId}) AS member
        FROM accounts a WHERE lower(a.email) = lower(${person.email}) AND a.deleted_at IS NULL FOR UPDATE`
      const existing = byEmail[0]
      if (existing !== undefined && existing.org_id !== orgId && !existing.member) {
        return yield* new SsoRejected({
          reason: "account_elsewhere",
          detail: "This e-mail address has an account in another organisation; an owner of this organisation adds it as a member first."
        })
      }
      if (existing === undefined) {
        accountId = newAccountId()
        home = orgId
        created = true
        yield* sql`INSERT INTO accounts ${sql.insert({ id: accountId, org_id: orgId, email: person.email, email_verified: true })}`
        yield* appendAudit(sql, { actor, action: "user.created", target: accountId, orgId, details: { role: jitRole, via: "sso" } })
        yield* outbox.record({ orgId, event: "user.created", data: { account_id: accountId, org_id: orgId, role: jitRole } })
      } else {
        accountId = existing.id
        home = existing.org_id
      }
      yield* sql`INSERT INTO sso_identities ${sql.insert({ org_id: orgId, subject: person.subject, account_id: accountId })}`
    }
    // An account made in this organisation without a membership row owns it (self-service issuance): left alone.
    // A new account gets its role here, or it would count as that owner.
    const member = yield* sql`SELECT 1 FROM memberships WHERE account_id = ${accountId} AND org_id = ${orgId}`
    const joined = created || (member.length === 0 && home !== orgId)
    if (joined) yield* sql`INSERT INTO memberships ${sql.insert({ account_id: accountId, org_id: orgId, role: jitRole })}`
    if (joined && !created) {
      yield* appendAudit(sql, { actor, action: "org.member_added", target: accountId, orgId, details: { role: jitRole, via: "sso" } })
      yield* outbox.record({ orgId, event: "org.member_added", data: { account_id: accountId, org_id: orgId, role: jitRole } })
    }
    yield* appendAudit(sql, { actor, action: "sso.sign_in", target: accountId, orgId, details: { protocol: person.protocol, account_created: created, joined } })
    return { accountId: accountId!, created }
  })).pipe(Effect.catchTag("SqlError", Effect.die))
