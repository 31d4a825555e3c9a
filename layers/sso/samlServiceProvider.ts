import { type CacheProvider, SAML, SamlStatusError, ValidateInResponseTo } from "@node-saml/node-saml"
import type { SamlConnection } from "../../services/SsoConnections.ts"
import { SsoRejected, type SsoRejectReason } from "../../services/SsoSignIn.ts"
import { ATTEMPT_TTL_MS } from "./loginAttempts.ts"

/** The gateway's SAML entity id for an organisation: the URL of its SP metadata. */
export const samlEntityId = (publicBaseUrl: string, orgId: string) =>
  `${publicBaseUrl}/api/v1/portal/sso/${encodeURIComponent(orgId)}/saml/metadata`

/** The assertion consumer service (HTTP-POST binding). */
export const samlAcsUrl = (publicBaseUrl: string, orgId: string) =>
  `${publicBaseUrl}/api/v1/portal/sso/${encodeURIComponent(orgId)}/saml/acs`

/** Clocks of the IdP and the gateway may differ this much when NotBefore / NotOnOrAfter are checked. */
const CLOCK_SKEW_MS = 30_000

/**
 * node-saml keeps the ids of AuthnRequests in a cache to check a response's InResponseTo. The gateway keeps them in
 * the database beside the browser's cookie instead (several nodes, one use each), so each call gets a cache holding
 * exactly the one request id this browser's sign-in sent, or records the id a new request gets.
 */
const oneRequestCache = (requestId: string | undefined, onSave?: (id: string) => void): CacheProvider => {
  const ids = new Map<string, string>(requestId === undefined ? [] : [[requestId, new Date().toISOString()]])
  return {
    saveAsync: async (key, value) => {
      ids.set(key, value)
      onSave?.(key)
      return { value, createdAt: Date.now() }
    },
    getAsync: async (key) => ids.get(key) ?? null,
    removeAsync: async (key) => {
      const value = key === null ? null : ids.get(key) ?? null
      if (key !== null) ids.delete(key)
      return value
    }
  }
}

/**
 * A node-saml service provider for one organisation's IdP: SP-initiated, AuthnRequest over HTTP-Redirect, response
 * over HTTP-POST. The assertion must be signed by one of the configured certificates (a signed response around an
 * unsigned assertion is not enough), issued by the configured entity id, for this SP's entity id (audience), within
 * its NotBefore / NotOnOrAfter window, and in response to the request this browser's sign-in sent (InResponseTo).
 */
const serviceProvider = (publicBaseUrl: string, connection: SamlConnection, cache: CacheProvider) =>
  new SAML({
    callbackUrl: samlAcsUrl(publicBaseUrl, connection.orgId),
    entryPoint: connection.ssoUrl,
    issuer: samlEntityId(publicBaseUrl, connection.orgId),
    audience: samlEntityId(publicBaseUrl, connection.orgId),
    idpCert: [...connection.certificates],
    idpIssuer: connection.entityId,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: ATTEMPT_TTL_MS,
    cacheProvider: cache,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    identifierFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
    // No RequestedAuthnContext: asking for "password" makes IdPs refuse people who sign in with a passkey or MFA.
    disableRequestedAuthnContext: true
  })

/** Where to send the browser (the IdP's sign-in URL with a deflated AuthnRequest) and the request's id. */
export const samlAuthorizeUrl = async (publicBaseUrl: string, connection: SamlConnection) => {
  let requestId: string | undefined
  const sp = serviceProvider(publicBaseUrl, connection, oneRequestCache(undefined, (id) => (requestId = id)))
  const url = await sp.getAuthorizeUrlAsync("", undefined, {})
  if (requestId === undefined) throw new Error("node-saml made an AuthnRequest without recording its id")
  return { url, requestId }
}

/** The SP metadata to give the IdP: entity id, ACS URL (HTTP-POST), NameID format e-mail, assertions signed. */
export const samlSpMetadata = (publicBaseUrl: string, connection: SamlConnection) =>
  serviceProvider(publicBaseUrl, connection, oneRequestCache(undefined)).generateServiceProviderMetadata(null, null)

/** What the IdP's signed assertion says about the person. */
export interface SamlPerson {
  readonly nameId: string
  readonly nameIdFormat: string
  readonly email: unknown
}

const EMAIL_ATTRIBUTES = [
  "email",
  "mail",
  "urn:oid:0.9.2342.19200300.100.1.3",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"
] as const

/** Validates an HTTP-POST `SAMLResponse` for the sign-in whose AuthnRequest had `requestId`. */
export const validateSamlResponse = async (publicBaseUrl: string, connection: SamlConnection, requestId: string, samlResponse: string): Promise<SamlPerson> => {
  const sp = serviceProvider(publicBaseUrl, connection, oneRequestCache(requestId))
  const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: samlResponse })
  if (profile === null) throw new Error("the response holds no assertion")
  const attribute = EMAIL_ATTRIBUTES.map((name) => profile[name]).find((v) => v !== undefined)
  const email = Array.isArray(attribute) ? attribute[0] : attribute
  return {
    nameId: profile.nameID,
    nameIdFormat: profile.nameIDFormat,
    email: email ?? (profile.nameIDFormat === "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" ? profile.nameID : undefined)
  }
}

const rejected = (reason: SsoRejectReason, detail: string) => new SsoRejected({ reason, detail })

/** node-saml's refusal as a stable reason; its messages name the check, not the person. */
export const classifySamlError = (e: unknown): SsoRejected => {
  if (e instanceof SamlStatusError) return rejected("idp_error", "The identity provider answered an error status instead of signing in.")
  const message = String((e as Error)?.message ?? e).slice(0, 300)
  if (/signature|Cannot obtain assertion/i.test(message)) return rejected("signature_invalid", `The SAML response is not signed as required by the IdP's certificate (${message}).`)
  if (/InResponseTo/i.test(message)) return rejected("state_mismatch", `The SAML response is not for the sign-in this browser started (${message}).`)
  if (/audience|AudienceRestriction/i.test(message)) return rejected("audience_mismatch", "The assertion is not for this gateway (its Audience is another service provider's).")
  if (/issuer/i.test(message)) return rejected("issuer_mismatch", "The SAML response was not issued by the configured IdP entity id.")
  // node-saml checks a SubjectConfirmationData only for its time window: none valid means all are outside it.
  if (/expired|not yet valid|No valid subject confirmation/i.test(message)) return rejected("token_expired", `The assertion is outside its validity window (${message}).`)
  return rejected("response_invalid", `The SAML response was refused (${message}).`)
}
