// Receipt verification keys as a JWKS (GET /api/.well-known/service-receipt-pubkeys.jwks) and the
// kid -> key resolver verifiers use. Rotated-out keys stay in the set so old receipts still verify.
import { importPublicJwk, type PublicJwk } from "../crypto/ecdsa.ts"

export interface ReceiptJwk extends PublicJwk {
  readonly kid: string
  readonly alg: "ES256"
  readonly use: "sig"
}

export interface Jwks {
  readonly keys: ReadonlyArray<ReceiptJwk>
}

export const toReceiptJwk = (jwk: PublicJwk, kid: string): ReceiptJwk => ({
  kty: "EC",
  crv: "P-256",
  x: jwk.x,
  y: jwk.y,
  kid,
  alg: "ES256",
  use: "sig"
})

/** A resolveKey for verifyReceipt backed by a JWKS; imports each key once. */
export const keyResolverFromJwks = (jwks: Jwks): ((kid: string) => Promise<CryptoKey | undefined>) => {
  const imported = new Map<string, Promise<CryptoKey>>()
  return async (kid) => {
    const jwk = jwks.keys.find((candidate) => candidate.kid === kid)
    if (jwk === undefined) return undefined
    let key = imported.get(kid)
    if (key === undefined) {
      key = importPublicJwk(jwk)
      imported.set(kid, key)
    }
    return key
  }
}
