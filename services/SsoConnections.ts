import { Context, Data, type Effect, type Redacted } from "effect"
import type { Role } from "./Accounts.ts"
import type { OrganisationNotFound } from "./Wallets.ts"

interface ConnectionCommon {
  readonly orgId: string
  /** Lower-case e-mail domains the IdP may sign in (`example.com`); anyone else is refused. */
  readonly allowedDomains: ReadonlyArray<string>
  /** The role of a person the IdP signs in to the organisation for the first time (just-in-time membership). */
  readonly jitRole: Role
  readonly updatedAt: Date
}

/** An OpenID Connect provider. Its client secret is never part of the view (see `oidcClientSecret`). */
export interface OidcConnection extends ConnectionCommon {
  readonly protocol: "oidc"
  readonly issuer: string
  readonly clientId: string
}

/** A SAML 2.0 identity provider: what its metadata says, or what the operator gave field by field. */
export interface SamlConnection extends ConnectionCommon {
  readonly protocol: "saml"
  readonly entityId: string
  /** Its single sign-on service (HTTP-Redirect binding) where the AuthnRequest goes. */
  readonly ssoUrl: string
  /** PEM certificates whose keys may sign its responses (several while the IdP rolls its key). */
  readonly certificates: ReadonlyArray<string>
  /** Where the metadata was read from, when it came from a URL (read when configured, not refreshed). */
  readonly metadataUrl: string | undefined
}

export type SsoConnection = OidcConnection | SamlConnection

/** The organisation has no identity provider configured (SSO is enabled by the operator only). */
export class SsoNotConfigured extends Data.TaggedError("SsoNotConfigured")<{ readonly orgId: string }> {}

/**
 * Per-organisation single sign-on configuration (docs/sso.md). Setting it is an operator action (`cli.ts sso idp
 * ...` or `/api/admin/sso/*`): there is no self-service route. Every change is in the audit log (`sso.configured`,
 * `sso.removed`), without secrets. The OIDC client secret is sealed under the KEK, bound to its organisation.
 */
export class SsoConnections extends Context.Service<SsoConnections, {
  /** Sets (or replaces) the organisation's IdP with an OpenID Connect provider. The caller validated the fields. */
  readonly setOidc: (input: {
    readonly actor: string
    readonly orgId: string
    readonly issuer: string
    readonly clientId: string
    readonly clientSecret: Redacted.Redacted<string>
    readonly allowedDomains: ReadonlyArray<string>
    readonly jitRole: Role
  }) => Effect.Effect<OidcConnection, OrganisationNotFound>
  /** Sets (or replaces) the organisation's IdP with a SAML 2.0 one. The caller validated the fields. */
  readonly setSaml: (input: {
    readonly actor: string
    readonly orgId: string
    readonly entityId: string
    readonly ssoUrl: string
    readonly certificates: ReadonlyArray<string>
    readonly metadataUrl: string | undefined
    readonly allowedDomains: ReadonlyArray<string>
    readonly jitRole: Role
  }) => Effect.Effect<SamlConnection, OrganisationNotFound>
  readonly get: (orgId: string) => Effect.Effect<SsoConnection, SsoNotConfigured>
  /** The decrypted OIDC client secret, for the token request only. Never log or return it. */
  readonly oidcClientSecret: (orgId: string) => Effect.Effect<Redacted.Redacted<string>, SsoNotConfigured>
  /** Removes the organisation's IdP; people it signed in keep their accounts and passwords (if any). */
  readonly remove: (input: { readonly actor: string; readonly orgId: string }) => Effect.Effect<void, SsoNotConfigured>
}>()("privacy-relay/SsoConnections") {}
