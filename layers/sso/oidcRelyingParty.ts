import * as client from "openid-client"
import { SsoRejected, type SsoRejectReason } from "../../services/SsoSignIn.ts"
import { oidcDiscoveryOptions } from "./oidcDiscovery.ts"

/** The gateway's redirect URI for an organisation: register it at the IdP (docs/sso.md). */
export const oidcRedirectUri = (publicBaseUrl: string, orgId: string) =>
  `${publicBaseUrl}/api/v1/portal/sso/${encodeURIComponent(orgId)}/oidc/callback`

/** Discovery documents are re-read after this long, so an IdP's key or endpoint change is picked up. */
const DISCOVERY_TTL_MS = 5 * 60_000
const MAX_CACHED = 1_000

/**
 * openid-client Configurations by (issuer, client, secret version): discovery is one request to the IdP, not one per
 * sign-in. The client authenticates with HTTP Basic (client_secret_basic), which Okta, Entra ID, Google and
 * Keycloak all accept.
 */
export const makeOidcConfigurations = () => {
  const cache = new Map<string, { readonly at: number; readonly config: Promise<client.Configuration> }>()
  return (input: { readonly key: string; readonly issuer: string; readonly clientId: string; readonly clientSecret: () => Promise<string> }) => {
    const hit = cache.get(input.key)
    if (hit !== undefined && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.config
    if (cache.size >= MAX_CACHED) cache.clear()
    const issuer = new URL(input.issuer)
    const config = input.clientSecret().then((secret) =>
      client.discovery(issuer, input.clientId, undefined, client.ClientSecretBasic(secret), oidcDiscoveryOptions(issuer)))
    // A failed discovery is not cached: the next sign-in tries again.
    config.catch(() => cache.delete(input.key))
    cache.set(input.key, { at: Date.now(), config })
    return config
  }
}

const rejected = (reason: SsoRejectReason, detail: string) => new SsoRejected({ reason, detail })

/**
 * openid-client's (oauth4webapi's) refusal of an authorization response or token as a stable reason. The library's
 * message names the claim, never its value, so it is kept as the detail.
 */
export const classifyOidcError = (e: unknown): SsoRejected => {
  if (e instanceof client.AuthorizationResponseError) {
    return rejected("idp_error", `The identity provider answered "${String(e.error).slice(0, 100)}" instead of signing in.`)
  }
  // openid-client rethrows oauth4webapi's error with a generic message and the original as `cause`; the original
  // names the claim (in its own `cause`).
  let error = e as { readonly code?: string; readonly message?: string; readonly cause?: any }
  while (error?.cause instanceof Error && typeof (error.cause as { code?: unknown }).code === "string") error = error.cause

  const message = String(error?.message ?? e).slice(0, 300)
  const claim = error?.cause?.claim
  if (error?.code === "OAUTH_JWT_CLAIM_COMPARISON_FAILED") {
    if (claim === "iss") return rejected("issuer_mismatch", `The ID token was not issued by the configured issuer (${message}).`)
    if (claim === "aud" || claim === "azp") return rejected("audience_mismatch", `The ID token is not for this gateway's client id (${message}).`)
    if (claim === "nonce") return rejected("nonce_mismatch", `The ID token's nonce is not the one this sign-in sent (${message}).`)
  }
  if (error?.code === "OAUTH_JWT_TIMESTAMP_CHECK_FAILED" && claim === "exp") return rejected("token_expired", `The ID token has expired (${message}).`)
  if (/signature verification failed/i.test(message) || error?.code === "OAUTH_KEY_SELECTION_FAILED") {
    return rejected("signature_invalid", `The ID token's signature does not verify with the issuer's keys (${message}).`)
  }
  if (/"state"/.test(message)) return rejected("state_mismatch", `The answer is not for the sign-in this browser started (${message}).`)
  return rejected("response_invalid", `The identity provider's answer was refused (${message}).`)
}
