import { Context, Data, type Effect } from "effect"
import { ABILITIES } from "../src/keys/scopes.ts"
import type { Role } from "./Accounts.ts"
import type { PortalPrincipal } from "./PortalTokens.ts"

export const SESSION_COOKIE = "pr_session"
export const CSRF_COOKIE = "pr_csrf"
export const CSRF_HEADER = "x-csrf-token"

/** A signed-in portal user. As a PortalPrincipal its `tokenId` is `account:<account id>` (the audit actor). */
export interface SessionPrincipal extends PortalPrincipal {
  readonly sessionId: string
  readonly accountId: string
  readonly role: Role
}

/** Every portal ability except the operator's own. */
const ORGANISATION_ABILITIES: ReadonlyArray<string> = ABILITIES.filter((a) => a !== "ability:admin")

/**
 * The operator's ability: every organisation's records, read-only in the portal's admin view. A session holds it only
 * while its account carries the operator flag (`cli.ts account operator grant`), never through a role.
 */
export const OPERATOR_ABILITY = "ability:admin"

/** What a role may do in its organisation. `ability:admin` (the operator's) is never granted by a role. */
export const ROLE_ABILITIES: Record<Role, ReadonlyArray<string>> = {
  owner: ORGANISATION_ABILITIES,
  admin: ORGANISATION_ABILITIES,
  member: ["ability:keys.read", "ability:billing.read", "webhooks.read"]
}

/**
 * What a request presents for a portal session, read off the request by the HTTP layer (layers/http/sessionCredentials.ts):
 * the `pr_session` cookie, the `pr_csrf` cookie, the `X-CSRF-Token` header and the request method (writes need the
 * CSRF pair). A missing cookie or header is `undefined`.
 */
export interface SessionCredentials {
  readonly sessionCookie: string | undefined
  readonly csrfCookie: string | undefined
  readonly csrfHeader: string | undefined
  readonly method: string
}

/** Sign-in refused: unknown e-mail and wrong password alike (no account enumeration). */
export class InvalidCredentials extends Data.TaggedError("InvalidCredentials")<{}> {}

/** Sign-in into an organisation the account is not a member of. */
export class NotAMember extends Data.TaggedError("NotAMember")<{}> {}

/** The request's session cookie names no live session: unknown, expired or signed out. */
export class SessionNotValid extends Data.TaggedError("SessionNotValid")<{}> {}

/** A cookie-authenticated write without the X-CSRF-Token header matching the pr_csrf cookie. */
export class CsrfFailed extends Data.TaggedError("CsrfFailed")<{}> {}

/**
 * Portal sign-in: e-mail + password -> a session (stored hashed) and a CSRF token (double submit: cookie
 * `pr_csrf` plus header `X-CSRF-Token`, both bound to the session). Portal tokens remain for scripts.
 */
export class PortalSessions extends Context.Service<PortalSessions, {
  /** `InvalidCredentials` (same for unknown e-mail and wrong password), `NotAMember` for another organisation. */
  readonly login: (input: { readonly email: string; readonly password: string; readonly orgId?: string }) =>
    Effect.Effect<
      { readonly token: string; readonly csrfToken: string; readonly expiresAt: Date; readonly principal: SessionPrincipal },
      InvalidCredentials | NotAMember
    >
  /**
   * A session for an account another way of signing in vouched for (single sign-on, docs/sso.md): the same session,
   * cookies and abilities as `login` gives. `NotAMember` when the account has no role in `orgId`.
   */
  readonly open: (input: { readonly accountId: string; readonly orgId: string }) =>
    Effect.Effect<{ readonly token: string; readonly csrfToken: string; readonly expiresAt: Date; readonly principal: SessionPrincipal }, NotAMember>
  readonly logout: (token: string) => Effect.Effect<void>
  /**
   * The session a request's credentials name, or undefined when they carry no session cookie.
   * `SessionNotValid` for an unknown/expired session; `CsrfFailed` for a write (any method but GET/HEAD/OPTIONS)
   * without a matching `X-CSRF-Token` header and `pr_csrf` cookie.
   */
  readonly fromCredentials: (credentials: SessionCredentials) => Effect.Effect<SessionPrincipal | undefined, SessionNotValid | CsrfFailed>
}>()("privacy-relay/PortalSessions") {}
