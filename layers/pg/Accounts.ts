import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import {
  AccountExists,
  AccountNotFound,
  type AccountView,
  Accounts,
  AlreadyMember,
  AlreadyVerified,
  NestedSubOrganisation,
  type Role,
  TRIAL_CREDIT_MICROS,
  VerificationLinkInvalid,
  VerificationLinkSpent
} from "../../services/Accounts.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { Mailer } from "../../services/Mailer.ts"
import { Outbox } from "../../services/Outbox.ts"
import { OrganisationNotFound, Wallets } from "../../services/Wallets.ts"
import { MailerLive } from "../mail/MailerLive.ts"
import { base64UrlRandom } from "./randomToken.ts"
import { appendAudit } from "./audit.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { insertOrganisation } from "./Organisations.ts"
import { hashPassword } from "./passwordHash.ts"
import { isUniqueViolation } from "./sqlErrors.ts"
import { WalletsPg } from "./Wallets.ts"


export const newAccountId = () => `acct_${crypto.randomUUID().replaceAll("-", "")}`

/**
 * The trial credit, at most once per account: the `trial_credits` primary key decides (and the ledger's unique
 * `trial:<account id>` reference backs it up). Runs inside the caller's transaction; fires `billing.credit_added`.
 * Returns whether this call granted it.
 */
export const grantTrialCredit = (sql: SqlClient.SqlClient, wallets: Wallets["Service"], outbox: Outbox["Service"], accountId: string, orgId: string) =>
  Effect.gen(function*() {
    const inserted = yield* sql`INSERT INTO trial_credits ${
      sql.insert({ account_id: accountId, org_id: orgId, amount_micros: TRIAL_CREDIT_MICROS.toString() })
    } ON CONFLICT (account_id) DO NOTHING RETURNING account_id`
    if (inserted.length === 0) return false
    const reference = `trial:${accountId}`
    // The account's organisation and its wallet were created with the account: a missing wallet is a broken invariant.
    const { balanceMicros } = yield* wallets.credit({ orgId, micros: TRIAL_CREDIT_MICROS, kind: "trial_credit", reference }).pipe(
      Effect.catchTag("OrganisationNotFound", (e) => Effect.die(e))
    )
    yield* appendAudit(sql, { actor: "email-verification", action: "billing.trial_credit", target: accountId, orgId, details: { amount_micros: Number(TRIAL_CREDIT_MICROS) } })
    yield* outbox.record({
      orgId,
      event: "billing.credit_added",
      data: { kind: "trial_credit", amount_micros: Number(TRIAL_CREDIT_MICROS), amount_usd: "2.00", reference, balance_micros: Number(balanceMicros) }
    })
    return true
  })

export const AccountsPg = Layer.effect(
  Accounts,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const wallets = yield* Wallets
    const mailer = yield* Mailer
    const config = yield* AppConfig
    const ttlHours = config.settings.emailVerificationTtlHours

    const sendVerification = (accountId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ email: string | null; email_verified: boolean }>`
          SELECT email, email_verified FROM accounts WHERE id = ${accountId} AND deleted_at IS NULL`.pipe(Effect.orDie)
        const account = rows[0]
        if (account === undefined || account.email === null) return yield* new AccountNotFound({ accountId })
        if (account.email_verified) {
          return yield* new AlreadyVerified()
        }
        const token = base64UrlRandom(32)
        yield* sql`INSERT INTO email_verifications ${
          sql.insert({
            token_hash: sha256HexSync(token),
            account_id: accountId,
            expires_at: new Date(Date.now() + (ttlHours > 0 ? ttlHours : 48) * 3_600_000).toISOString()
          })
        }`.pipe(Effect.orDie)
        const link = `${config.publicBaseUrl}/api/v1/account/verify?token=${token}`
        yield* mailer.send({
          to: account.email,
          subject: "Verify your e-mail address for Privacy Relay",
          text: [
            "Confirm this address by opening the link below (it works once and expires in " + ttlHours + " hours):",
            "",
            link,
            "",
            "Verifying grants your account a one-time $2 trial credit.",
            "If you did not ask for this, ignore this message."
          ].join("\n")
        })
      })

    /**
     * The link of an account just committed (sign-up, invitation): true when the mail server took it. A mail server
     * that is down does not fail the call, or the person is told to try again and refused as existing; they ask for
     * the link again (POST /api/v1/account/verification) once mail works (decisions.md).
     */
    const verificationSentUnlessMailDown = (accountId: string, what: string) =>
      sendVerification(accountId).pipe(
        Effect.as(true),
        Effect.catchTag("MailUnavailable", () => Effect.logWarning(`${what}: verification mail not sent`).pipe(Effect.as(false)))
      )

    const view = (accountId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ id: string; email: string | null; email_verified: boolean; org_id: string }>`
          SELECT id, email, email_verified, org_id FROM accounts WHERE id = ${accountId} AND deleted_at IS NULL`
        if (rows.length === 0) return yield* new AccountNotFound({ accountId })
        const memberships = yield* sql<{ org_id: string; role: Role }>`
          SELECT org_id, role FROM memberships WHERE account_id = ${accountId} ORDER BY created_at, org_id`
        return {
          accountId,
          email: rows[0].email,
          emailVerified: rows[0].email_verified,
          homeOrgId: rows[0].org_id,
          memberships: memberships.map((m) => ({ orgId: m.org_id, role: m.role }))
        } satisfies AccountView
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const inReach = (actorOrgId: string, orgId: string) =>
      orgId === actorOrgId
        ? Effect.succeed(true)
        : sql`SELECT 1 FROM organisations WHERE id = ${orgId} AND parent_id = ${actorOrgId}`.pipe(Effect.map((r) => r.length > 0), Effect.orDie)

    return Accounts.of({
      sendVerification,
      get: view,

      signUp: ({ email, password, organisationName }) =>
        Effect.gen(function*() {
          const passwordHash = yield* Effect.promise(() => hashPassword(password))
          const accountId = newAccountId()
          const orgId = yield* sql.withTransaction(Effect.gen(function*() {
            const existing = yield* sql`SELECT 1 FROM accounts WHERE lower(email) = lower(${email})`
            if (existing.length > 0) return yield* new AccountExists()
            const orgId = yield* insertOrganisation(sql, { name: organisationName ?? email })
            yield* sql`INSERT INTO accounts ${sql.insert({ id: accountId, org_id: orgId, email, email_verified: false, password_hash: passwordHash })}`
            yield* sql`INSERT INTO memberships ${sql.insert({ account_id: accountId, org_id: orgId, role: "owner" })}`
            yield* appendAudit(sql, { actor: "sign-up", action: "user.created", target: accountId, orgId, details: { role: "owner" } })
            yield* outbox.record({ orgId, event: "user.created", data: { account_id: accountId, org_id: orgId, role: "owner" } })
            return orgId
          })).pipe(Effect.catchTag("SqlError", (e) => (isUniqueViolation(e) ? new AccountExists() : Effect.die(e))))
          // The account is committed; the portal's "Send the link again" asks for a link the mail server did not take.
          const verificationSent = yield* verificationSentUnlessMailDown(accountId, "sign-up")
          return { accountId, orgId, verificationSent }
        }),

      requestVerification: (email) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ id: string }>`
            SELECT id FROM accounts WHERE lower(email) = lower(${email}) AND deleted_at IS NULL AND NOT email_verified`.pipe(Effect.orDie)
          if (rows.length === 0) return
          yield* sendVerification(rows[0].id)
        }),

      verify: (token, password) =>
        Effect.gen(function*() {
          const passwordHash = password === undefined ? null : yield* Effect.promise(() => hashPassword(password))
          const tokenHash = sha256HexSync(token)
          return yield* sql.withTransaction(Effect.gen(function*() {
            const found = yield* sql<{ account_id: string }>`SELECT account_id FROM email_verifications WHERE token_hash = ${tokenHash}`
            if (found.length === 0) {
              return yield* new VerificationLinkInvalid()
            }
            const accountId = found[0].account_id
            // Lock the account first: concurrent clicks on two links of one account then queue here instead of
            // deadlocking on each other's link rows.
            const locked = yield* sql`SELECT 1 FROM accounts WHERE id = ${accountId} AND deleted_at IS NULL FOR UPDATE`
            if (locked.length === 0) return yield* new AccountNotFound({ accountId })
            const used = yield* sql<{ account_id: string }>`
              UPDATE email_verifications SET used_at = now()
              WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now() RETURNING account_id`
            if (used.length === 0) {
              const known = yield* sql<{ used: boolean }>`SELECT used_at IS NOT NULL AS used FROM email_verifications WHERE token_hash = ${tokenHash}`
              return yield* new VerificationLinkSpent({ used: known[0]?.used === true })
            }
            const accounts = yield* sql<{ org_id: string }>`
              UPDATE accounts SET email_verified = true, password_hash = COALESCE(password_hash, ${passwordHash})
              WHERE id = ${accountId} RETURNING org_id`
            const orgId = accounts[0].org_id
            // Other pending links of this account are now pointless.
            yield* sql`UPDATE email_verifications SET used_at = now() WHERE account_id = ${accountId} AND used_at IS NULL`
            yield* appendAudit(sql, { actor: `account:${accountId}`, action: "user.email_verified", target: accountId, orgId })
            const trialCredited = yield* grantTrialCredit(sql, wallets, outbox, accountId, orgId)
            return { accountId, orgId, trialCredited }
          })).pipe(Effect.catchTag("SqlError", Effect.die))
        }),

      addMember: ({ actor, actorOrgId, orgId, email, role }) =>
        Effect.gen(function*() {
          if (!(yield* inReach(actorOrgId, orgId))) return yield* new OrganisationNotFound({ orgId })
          const result = yield* sql.withTransaction(Effect.gen(function*() {
            const existing = yield* sql<{ id: string; org_id: string }>`
              SELECT id, org_id FROM accounts WHERE lower(email) = lower(${email}) AND deleted_at IS NULL FOR UPDATE`
            if (existing.length > 0) {
              const accountId = existing[0].id
              const member = yield* sql`SELECT 1 FROM memberships WHERE account_id = ${accountId} AND org_id = ${orgId}`
              if (member.length > 0 || existing[0].org_id === orgId) {
                return yield* new AlreadyMember()
              }
              yield* sql`INSERT INTO memberships ${sql.insert({ account_id: accountId, org_id: orgId, role })}`
              yield* appendAudit(sql, { actor, action: "org.member_added", target: accountId, orgId, details: { role } })
              yield* outbox.record({ orgId, event: "org.member_added", data: { account_id: accountId, org_id: orgId, role } })
              return { accountId, created: false }
            }
            const accountId = newAccountId()
            yield* sql`INSERT INTO accounts ${sql.insert({ id: accountId, org_id: orgId, email, email_verified: false })}`
            yield* sql`INSERT INTO memberships ${sql.insert({ account_id: accountId, org_id: orgId, role })}`
            yield* appendAudit(sql, { actor, action: "user.created", target: accountId, orgId, details: { role } })
            yield* outbox.record({ orgId, event: "user.created", data: { account_id: accountId, org_id: orgId, role } })
            return { accountId, created: true }
          })).pipe(Effect.catchTag("SqlError", (e) => (isUniqueViolation(e) ? new AccountExists() : Effect.die(e))))
          // As at sign-up; the portal's "Send the invitation again" asks for a link the mail server did not take.
          const verificationSent = result.created ? yield* verificationSentUnlessMailDown(result.accountId, "invitation") : false
          return { ...result, verificationSent }
        }),

      createSubOrganisation: ({ actor, parentOrgId, name }) =>
        sql.withTransaction(Effect.gen(function*() {
          const parent = yield* sql<{ parent_id: string | null }>`SELECT parent_id FROM organisations WHERE id = ${parentOrgId}`
          if (parent.length === 0) return yield* new OrganisationNotFound({ orgId: parentOrgId })
          // Partner mode is one level deep: a sub-organisation cannot have its own sub-organisations.
          if (parent[0].parent_id !== null) {
            return yield* new NestedSubOrganisation()
          }
          const orgId = yield* insertOrganisation(sql, { name, parentId: parentOrgId })
          yield* appendAudit(sql, { actor, action: "org.created", target: orgId, orgId: parentOrgId, details: { parent_id: parentOrgId } })
          return { orgId }
        })).pipe(Effect.catchTag("SqlError", Effect.die)),

      erase: ({ actor, accountId }) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<{ email: string | null; org_id: string }>`
            SELECT email, org_id FROM accounts WHERE id = ${accountId} AND deleted_at IS NULL FOR UPDATE`
          if (rows.length === 0) return yield* new AccountNotFound({ accountId })
          const { email, org_id: homeOrgId } = rows[0]
          const memberOf = yield* sql<{ org_id: string }>`SELECT org_id FROM memberships WHERE account_id = ${accountId}`
          const orgs = [...new Set([homeOrgId, ...memberOf.map((m) => m.org_id)])]
          if (email !== null) yield* sql`DELETE FROM mail_outbox WHERE lower(to_address) = lower(${email})`
          yield* sql`DELETE FROM email_verifications WHERE account_id = ${accountId}`
          yield* sql`DELETE FROM portal_sessions WHERE account_id = ${accountId}`
          yield* sql`DELETE FROM memberships WHERE account_id = ${accountId}`
          // OIDC grants, sessions and tokens of this user.
          yield* sql`DELETE FROM oidc_payloads WHERE account_id = ${accountId}`
          yield* sql`UPDATE accounts SET email = NULL, password_hash = NULL, email_verified = false, deleted_at = now() WHERE id = ${accountId}`
          yield* appendAudit(sql, { actor, action: "user.deleted", target: accountId, orgId: homeOrgId })
          for (const orgId of orgs) yield* outbox.record({ orgId, event: "user.deleted", data: { account_id: accountId, org_id: orgId } })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  })
)

/** Accounts with its mailer (SMTP or the dev outbox) exposed too, ready for the gateway's domain layer. */
export const AccountsLive = AccountsPg.pipe(Layer.provide(WalletsPg), Layer.provideMerge(MailerLive))
