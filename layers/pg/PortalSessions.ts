import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Role } from "../../services/Accounts.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import {
  CsrfFailed,
  InvalidCredentials,
  NotAMember,
  OPERATOR_ABILITY,
  PortalSessions,
  ROLE_ABILITIES,
  type SessionCredentials,
  type SessionPrincipal,
  SessionNotValid
} from "../../services/PortalSessions.ts"
import { timingSafeEqual } from "node:crypto"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { DUMMY_PASSWORD_HASH, verifyPassword } from "./passwordHash.ts"
import { base64UrlRandom } from "./randomToken.ts"

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export const PortalSessionsPg = Layer.effect(
  PortalSessions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const ttlHours = config.settings.portalSessionTtlHours

    /** A role's abilities, plus the operator's `ability:admin` when the account holds the operator flag. */
    const principalOf = (row: { id: string; account_id: string; org_id: string; role: Role; operator: boolean }): SessionPrincipal => ({
      sessionId: row.id,
      accountId: row.account_id,
      orgId: row.org_id,
      role: row.role,
      tokenId: `account:${row.account_id}`,
      abilities: row.operator ? [...ROLE_ABILITIES[row.role], OPERATOR_ABILITY] : ROLE_ABILITIES[row.role]
    })

    /** A new session of `account` in `target`, when it has a role there. */
    const startSession = (account: { id: string; org_id: string; operator: boolean }, target: string) =>
      Effect.gen(function*() {
        const roles = yield* sql<{ role: Role; suspended: boolean }>`
          SELECT role, suspended_at IS NOT NULL AS suspended FROM memberships WHERE account_id = ${account.id} AND org_id = ${target}`.pipe(Effect.orDie)
        // Accounts made by self-service issuance own their organisation without a membership row. A membership the
        // organisation's IdP deactivated (SCIM active=false) signs nobody in, by password or single sign-on, not even
        // through that fallback.
        const role: Role | undefined = roles[0]?.suspended ? undefined : roles[0]?.role ?? (target === account.org_id ? "owner" : undefined)
        if (role === undefined) return yield* new NotAMember()
        const token = base64UrlRandom(32)
        const csrfToken = base64UrlRandom(32)
        const id = `ses_${crypto.randomUUID().replaceAll("-", "")}`
        const expiresAt = new Date(Date.now() + (ttlHours > 0 ? ttlHours : 12) * 3_600_000)
        yield* sql`INSERT INTO portal_sessions ${
          sql.insert({
            id,
            token_hash: sha256HexSync(token),
            csrf_hash: sha256HexSync(csrfToken),
            account_id: account.id,
            org_id: target,
            expires_at: expiresAt.toISOString()
          })
        }`.pipe(Effect.orDie)
        return { token, csrfToken, expiresAt, principal: principalOf({ id, account_id: account.id, org_id: target, role, operator: account.operator }) }
      })

    return PortalSessions.of({
      open: ({ accountId, orgId }) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ id: string; org_id: string; operator: boolean }>`
            SELECT id, org_id, operator_granted_at IS NOT NULL AS operator
            FROM accounts WHERE id = ${accountId} AND deleted_at IS NULL`.pipe(Effect.orDie)
          if (rows[0] === undefined) return yield* new NotAMember()
          return yield* startSession(rows[0], orgId)
        }),

      login: ({ email, password, orgId }) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ id: string; org_id: string; password_hash: string | null; operator: boolean }>`
            SELECT id, org_id, password_hash, operator_granted_at IS NOT NULL AS operator
            FROM accounts WHERE lower(email) = lower(${email}) AND deleted_at IS NULL`.pipe(Effect.orDie)
          const account = rows[0]
          // Always pay for one scrypt, so response time does not tell whether the e-mail has an account.
          const ok = yield* Effect.promise(() => verifyPassword(password, account?.password_hash ?? DUMMY_PASSWORD_HASH))
          if (account === undefined || account.password_hash === null || !ok) return yield* new InvalidCredentials()
          return yield* startSession(account, orgId ?? account.org_id)
        }),

      logout: (token) => sql`DELETE FROM portal_sessions WHERE token_hash = ${sha256HexSync(token)}`.pipe(Effect.asVoid, Effect.orDie),

      fromCredentials: (credentials: SessionCredentials) =>
        Effect.gen(function*() {
          const token = credentials.sessionCookie
          if (token === undefined || token === "") return undefined
          const rows = yield* sql<{ id: string; account_id: string; org_id: string; csrf_hash: string; role: Role | null; suspended: boolean; home: string; operator: boolean }>`
            SELECT s.id, s.account_id, s.org_id, s.csrf_hash, m.role, m.suspended_at IS NOT NULL AS suspended, a.org_id AS home, a.operator_granted_at IS NOT NULL AS operator
            FROM portal_sessions s
            JOIN accounts a ON a.id = s.account_id AND a.deleted_at IS NULL
            LEFT JOIN memberships m ON m.account_id = s.account_id AND m.org_id = s.org_id
            WHERE s.token_hash = ${sha256HexSync(token)} AND s.revoked_at IS NULL AND s.expires_at > now()`.pipe(Effect.orDie)
          const row = rows[0]
          // The role and the operator flag are read on every request, so removing either takes effect at once.
          const role = row?.suspended ? undefined : row?.role ?? (row !== undefined && row.home === row.org_id ? "owner" : undefined)
          if (row === undefined || role === undefined) return yield* new SessionNotValid()
          if (!SAFE_METHODS.has(credentials.method)) {
            const header = credentials.csrfHeader
            const cookie = credentials.csrfCookie
            if (header === undefined || cookie === undefined || !sameSecret(header, cookie) || !sameSecret(sha256HexSync(header), row.csrf_hash)) {
              return yield* new CsrfFailed()
            }
          }
          return principalOf({ id: row.id, account_id: row.account_id, org_id: row.org_id, role, operator: row.operator })
        })
    })
  })
)
