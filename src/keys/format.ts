import { base32Encode } from "../crypto/base32.ts"

/**
 * Gateway keys are `svc_` + lowercase RFC 4648 base32 (no padding) of 32 random bytes (256 bits, 52 chars);
 * portal tokens are `spt_` + the same body. Only the SHA-256 of a key is ever stored.
 */
export const GATEWAY_KEY_PREFIX = "svc_"
export const PORTAL_TOKEN_PREFIX = "spt_"
export const KEY_BODY_LENGTH = 52

const newSecret = (prefix: string) => prefix + base32Encode(crypto.getRandomValues(new Uint8Array(32)))

export const newGatewayKey = () => newSecret(GATEWAY_KEY_PREFIX)
export const newPortalToken = () => newSecret(PORTAL_TOKEN_PREFIX)

const BODY = /^[a-z2-7]{52}$/

export const isWellFormedGatewayKey = (s: string) => s.startsWith(GATEWAY_KEY_PREFIX) && BODY.test(s.slice(4))
export const isWellFormedPortalToken = (s: string) => s.startsWith(PORTAL_TOKEN_PREFIX) && BODY.test(s.slice(4))

/** `svc_` plus the first 6 characters of the body: identifies a key without revealing it. */
export const keyPrefixOf = (key: string) => key.slice(0, 10)
