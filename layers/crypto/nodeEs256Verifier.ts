// Synchronous ES256 verification over a public P-256 JWK on node:crypto, for the v3 attestation check on every
// relayed call. The attester key travels inside each attestation, so the WebCrypto path imported it on every
// call; here imported KeyObjects are cached by the JWK's coordinates.
//
// Why the cache is bounded: the key is chosen by the client (a device may mint one per install, per session,
// or, if hostile, per request), so an unbounded cache would let callers grow gateway memory without limit.
// 10,000 keys is far more than the distinct devices active within any short window on one gateway process,
// and costs about 17 MB of RSS when full (measured: ~1.7 KB per imported P-256 KeyObject with its map entry);
// a key evicted by a flood of fresh keys is simply imported again (the cost the WebCrypto path paid on every call).
import { createPublicKey, type KeyObject, verify } from "node:crypto"
import { isPublicJwk, type PublicJwk } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { BoundedLru } from "../../src/cache/boundedLru.ts"
import { p256RawToDer } from "../../sdks/typescript/src/wire/crypto/ecdsaSignatureDer.ts"

export const DEFAULT_PUBLIC_KEY_CACHE_BOUND = 10_000

/** An ES256 verifier with its own bounded cache of imported public keys. */
export interface NodeEs256Verifier {
  /**
   * True when `signature` (raw r||s, exactly 64 bytes) is a valid ES256 signature of `bytes` under `jwk`.
   * A malformed JWK, a point not on the curve or a malformed signature answer false; never throws.
   */
  verify(jwk: PublicJwk, signature: Uint8Array, bytes: Uint8Array): boolean
  /** Imported keys currently cached (never above the bound). */
  readonly cachedKeys: () => number
}

export const makeNodeEs256Verifier = (options?: { readonly cacheBound?: number }): NodeEs256Verifier => {
  const cache = new BoundedLru<string, KeyObject>(options?.cacheBound ?? DEFAULT_PUBLIC_KEY_CACHE_BOUND)

  const publicKeyOf = (jwk: PublicJwk): KeyObject => {
    // base64url never contains ".", so "x.y" names exactly one point; kty/crv were checked by isPublicJwk.
    const cacheKey = `${jwk.x}.${jwk.y}`
    const cached = cache.get(cacheKey)
    if (cached !== undefined) return cached
    // Throws for a point that is not on P-256; failures are not cached, so a bad key cannot evict good ones.
    const key = createPublicKey({ key: { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y }, format: "jwk" })
    cache.set(cacheKey, key)
    return key
  }

  return {
    verify: (jwk, signature, bytes) => {
      // The same rule as sdks/typescript/src/wire/crypto/ecdsa.ts verifyRaw: only the raw 64-byte r||s form is a signature.
      if (!(signature instanceof Uint8Array) || signature.length !== 64) return false
      if (!isPublicJwk(jwk)) return false
      try {
        // DER in, rather than node's dsaEncoding "ieee-p1363", which adds about 50 µs per call (ecdsaSignatureDer.ts).
        // Canonical DER of the same r and s, so the verdict is the same. DER is node's default for ECDSA: the bare
        // KeyObject skips node's key-option parsing ({ key, dsaEncoding } measured 52 instead of 43 µs per check).
        return verify("sha256", bytes, publicKeyOf(jwk), p256RawToDer(signature))
      } catch {
        return false
      }
    },
    cachedKeys: () => cache.size
  }
}
