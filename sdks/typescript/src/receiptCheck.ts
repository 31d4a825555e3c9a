/**
 * Verifies the receipts a call brings back (v2 header or trailer) against the gateway's published JWKS, fetched once
 * per client and fetched again once when a receipt names a kid it does not hold (the gateway rotated its key).
 */
import { importPublicJwk } from "../../../src/crypto/ecdsa.ts"
import { verifyReceipt, type VerificationResult } from "../../../src/receipts/verify.ts"

export interface Jwks {
  readonly keys: ReadonlyArray<Record<string, unknown>>
}

export interface ReceiptChecker {
  readonly verify: (envelope: unknown) => Promise<VerificationResult>
}

export const createReceiptChecker = (loadJwks: () => Promise<Jwks>, initial?: Jwks): ReceiptChecker => {
  let jwks: Promise<Jwks> | undefined = initial === undefined ? undefined : Promise.resolve(initial)
  const keys = new Map<string, Promise<CryptoKey | undefined>>()
  const current = () => (jwks ??= loadJwks().catch((error) => {
    jwks = undefined
    throw error
  }))
  const find = async (kid: string, refetched: boolean): Promise<CryptoKey | undefined> => {
    const jwk = (await current()).keys.find((k) => k.kid === kid)
    if (jwk !== undefined) return importPublicJwk(jwk)
    if (refetched) return undefined
    jwks = undefined
    return find(kid, true)
  }
  return {
    verify: (envelope) =>
      verifyReceipt(envelope, {
        nowSeconds: Math.floor(Date.now() / 1000),
        resolveKey: (kid) => {
          let key = keys.get(kid)
          if (key === undefined) {
            key = find(kid, false).catch(() => undefined)
            keys.set(kid, key)
            // An unknown kid is asked again next time (the JWKS may gain it); a known one stays.
            void key.then((k) => k === undefined && keys.delete(kid))
          }
          return key
        }
      })
  }
}
