// A receipt Signer on node:crypto. WebCrypto's sign is async: each signature is a libuv thread-pool job plus
// promise plumbing around the same OpenSSL work. node:crypto's one-shot sign() does that work on the calling
// thread with no queueing; the private key is imported once into a KeyObject (at key load or rotation), never
// per signature. OpenSSL signs in DER and we convert to the raw r||s (64 bytes) our envelopes carry ourselves,
// because node's dsaEncoding "ieee-p1363" option roughly doubles the cost of a signature (ecdsaSignatureDer.ts).
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto"
import { isP256FieldElement, isPublicJwk, type PrivateJwk } from "../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import type { Signer } from "../../sdks/typescript/src/wire/receipts/signer.ts"
import { p256DerToRaw } from "../../sdks/typescript/src/wire/crypto/ecdsaSignatureDer.ts"

const PAIRWISE_PROBE = new TextEncoder().encode("receipt signing key pairwise consistency check")

/**
 * Imports a private P-256 JWK (kty, crv, x, y, d; other members ignored) as a node KeyObject. Throws unless the
 * JWK is a P-256 private key whose `d` belongs to its `x`/`y`.
 *
 * Why the extra checks: WebCrypto's JWK import rejects a `d` of the wrong length or one that does not match the
 * public point, but node's createPrivateKey accepts both and keeps the JWK's x/y as the public key. A mismatched
 * stored key or key file would then sign receipts nobody can verify against the published key; a probe signature
 * checked against the JWK's own public point (once per import) refuses such a key instead.
 */
export const importPrivateJwkKeyObject = (jwk: PrivateJwk): KeyObject => {
  const { kty, crv, x, y, d } = jwk
  if (!isPublicJwk({ kty, crv, x, y }) || !isP256FieldElement(d)) throw new TypeError("not an EC P-256 private JWK")
  const privateKey = createPrivateKey({ key: { kty, crv, x, y, d }, format: "jwk" })
  const publicKey = createPublicKey({ key: { kty, crv, x, y }, format: "jwk" })
  if (!verify("sha256", PAIRWISE_PROBE, publicKey, sign("sha256", PAIRWISE_PROBE, privateKey))) {
    throw new TypeError("private JWK: d does not belong to the public point x, y")
  }
  return privateKey
}

/** ES256 over `bytes` with a P-256 private KeyObject: raw r||s, 64 bytes. Synchronous. */
export const signEs256Sync = (privateKey: KeyObject, bytes: Uint8Array): Uint8Array =>
  // The KeyObject itself, not { key, dsaEncoding: "der" }: DER is node's default for ECDSA, and the options object
  // sends every call through node's key-option parsing (measured: 18 instead of 26 µs per signature).
  p256DerToRaw(sign("sha256", bytes, privateKey))

/**
 * A Signer whose signature is computed synchronously; the Signer interface stays promise-shaped (an already
 * settled promise) so the portable envelope builders and other signers (KMS, HSM) need no change.
 */
export const nodeSignerFromKeyObject = (kid: string, privateKey: KeyObject): Signer => {
  if (privateKey.type !== "private" || privateKey.asymmetricKeyType !== "ec") {
    throw new TypeError("receipt signer needs an EC private key")
  }
  if (privateKey.asymmetricKeyDetails?.namedCurve !== "prime256v1") throw new TypeError("receipt signer needs a P-256 key")
  return {
    kid,
    sign: (bytes) => {
      try {
        return Promise.resolve(signEs256Sync(privateKey, bytes))
      } catch (error) {
        return Promise.reject(error)
      }
    }
  }
}

/** A Signer for a private P-256 JWK, imported once here. Throws when the JWK is not a P-256 private key. */
export const nodeSignerFromPrivateJwk = (kid: string, jwk: PrivateJwk): Signer =>
  nodeSignerFromKeyObject(kid, importPrivateJwkKeyObject(jwk))
