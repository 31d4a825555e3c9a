import * as client from "openid-client"
import { isSecureOrLoopback } from "../../src/sso/samlMetadata.ts"

/**
 * openid-client refuses plain http; an issuer on the loopback (development, tests) is let through, nothing else.
 * The ID token's signature is always checked against the issuer's JWKS (enableNonRepudiationChecks): by default the
 * library trusts the TLS channel to the token endpoint instead, and the issue asks for the signature itself.
 */
export const oidcDiscoveryOptions = (issuer: URL): client.DiscoveryRequestOptions => ({
  execute: issuer.protocol === "http:" && isSecureOrLoopback(issuer)
    ? [client.allowInsecureRequests, client.enableNonRepudiationChecks]
    : [client.enableNonRepudiationChecks],
  timeout: 10
})
