import { Context, Data, type Effect } from "effect"
import type { SessionPrincipal } from "./PortalSessions.ts"
import type { SsoNotConfigured } from "./SsoConnections.ts"

/**
 * Why a sign-in through the identity provider was refused (the `reason` of 401 `sso_rejected`; docs/sso.md lists
 * them). Nothing is created or changed by a refused sign-in: no account, membership, session or identity link.
 */
export type SsoRejectReason =
  /** No sign-in under way for this browser (no `pr_sso` cookie, expired after 10 minutes, or already used). */
  | "attempt_unknown"
  /** The IdP answered an error instead of a sign-in (the person cancelled, or the IdP refused them). */
  | "idp_error"
  /** The answer is not for the sign-in this browser started (OIDC `state`, SAML `InResponseTo`). */
  | "state_mismatch"
  | "issuer_mismatch"
  | "audience_mismatch"
  | "nonce_mismatch"
  | "token_expired"
  /** The ID token's or SAML response's signature does not verify with the IdP's keys, or is missing. */
  | "signature_invalid"
  /** Any other fault of the IdP's answer (malformed, wrong time window, wrong destination, ...). */
  | "response_invalid"
  | "email_missing"
  | "email_not_verified"
  /** The e-mail address is outside the organisation's allowed domains. */
  | "domain_not_allowed"
  /** The e-mail address has an account that belongs to another organisation (it is not linked: docs/sso.md). */
  | "account_elsewhere"

export class SsoRejected extends Data.TaggedError("SsoRejected")<{
  readonly reason: SsoRejectReason
  /** For the person and the log: never a token, an assertion or a secret. */
  readonly detail: string
}> {}

/** A signed-in portal session, as the password sign-in makes one. */
export interface SsoSession {
  readonly token: string
  readonly csrfToken: string
  readonly expiresAt: Date
  readonly principal: SessionPrincipal
  /** The account was made by this sign-in (just-in-time). */
  readonly accountCreated: boolean
}

/**
 * Sign-in to the portal through an organisation's identity provider (docs/sso.md). `begin` answers where to send
 * the browser and a random value for its `pr_sso` cookie; the IdP's answer is accepted only together with that
 * cookie, once, within 10 minutes. A person the IdP vouches for, with an e-mail address in an allowed domain, joins
 * the organisation with the configured role on first sign-in (just-in-time). Audit: `sso.sign_in`, and
 * `user.created` / `org.member_added` (also webhook events) when the sign-in made them.
 */
export class SsoSignIn extends Context.Service<SsoSignIn, {
  readonly begin: (orgId: string) => Effect.Effect<{ readonly redirectTo: string; readonly attempt: string }, SsoNotConfigured>
  /** The OIDC redirect back: `callbackQuery` is the query string the IdP sent the browser back with. */
  readonly completeOidc: (input: { readonly orgId: string; readonly attempt: string | undefined; readonly callbackQuery: URLSearchParams }) =>
    Effect.Effect<SsoSession, SsoRejected | SsoNotConfigured>
  /** The SAML HTTP-POST answer at the assertion consumer service: `samlResponse` is the form's `SAMLResponse`. */
  readonly completeSaml: (input: { readonly orgId: string; readonly attempt: string | undefined; readonly samlResponse: string }) =>
    Effect.Effect<SsoSession, SsoRejected | SsoNotConfigured>
  /** The gateway's SP metadata for a SAML organisation (entity id, ACS URL), to give the IdP. */
  readonly samlMetadata: (orgId: string) => Effect.Effect<string, SsoNotConfigured>
}>()("privacy-relay/SsoSignIn") {}
