import { Context, Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { ApiError } from "../src/http/ApiError.ts"
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
 * Portal sign-in: e-mail + password -> a session (stored hashed) and a CSRF token (double submit: cookie
 * `pr_csrf` plus header `X-CSRF-Token`, both bound to the session). Portal tokens remain for scripts.
 */
export class PortalSessions extends Context.Service<PortalSessions, {
  /** 401 `invalid_credentials` (same answer for unknown e-mail and wrong password). */
  readonly login: (input: { readonly email: string; readonly password: string; readonly orgId?: string }) =>
    Effect.Effect<{ readonly token: string; readonly csrfToken: string; readonly expiresAt: Date; readonly principal: SessionPrincipal }, ApiError>
  readonly logout: (token: string) => Effect.Effect<void>
  /**
   * The session of a cookie-authenticated request, or undefined when the request carries no session cookie.
   * 401 `portal_auth_required` for an unknown/expired session; 403 `csrf_failed` for a write (any method but
   * GET/HEAD/OPTIONS) without a matching `X-CSRF-Token` header and `pr_csrf` cookie.
   */
  readonly fromRequest: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<SessionPrincipal | undefined, ApiError>
}>()("privacy-relay/PortalSessions") {}
