import { generateKeyPairSync, sign } from "node:crypto"
import { describe, expect, it } from "vitest"
import { DEFAULT_PUBLIC_KEY_CACHE_BOUND, makeNodeEs256Verifier } from "../../../layers/crypto/nodeEs256Verifier.ts"
import { exportPublicJwk, generateSigningKeyPair, signRaw, type PublicJwk } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)
const message = utf8('{"v":"v3","jti":"0123"}')

/** A P-256 public JWK made with node:crypto (fast, for filling the cache with distinct keys). */
const freshPublicJwk = (): PublicJwk => {
  const { x, y } = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" })
  return { kty: "EC", crv: "P-256", x: x!, y: y! }
}

const webCryptoSigned = async () => {
  const pair = await generateSigningKeyPair()
  return { jwk: await exportPublicJwk(pair.publicKey), signature: await signRaw(pair.privateKey, message), pair }
}

describe("makeNodeEs256Verifier", () => {
  it("accepts WebCrypto signatures over the same bytes, repeatedly (cached key)", async () => {
    const verifier = makeNodeEs256Verifier()
    const { jwk, signature } = await webCryptoSigned()
    expect(verifier.verify(jwk, signature, message)).toBe(true)
    expect(verifier.verify(jwk, signature, message)).toBe(true)
    expect(verifier.cachedKeys()).toBe(1)
  })

  it("rejects tampered bytes, a tampered signature and the wrong key without throwing", async () => {
    const verifier = makeNodeEs256Verifier()
    const { jwk, signature } = await webCryptoSigned()
    const otherBytes = Uint8Array.from(message)
    otherBytes[3] ^= 0x01
    expect(verifier.verify(jwk, signature, otherBytes)).toBe(false)
    for (const index of [0, 31, 32, 63]) {
      const flipped = Uint8Array.from(signature)
      flipped[index] ^= 0x01
      expect(verifier.verify(jwk, flipped, message)).toBe(false)
    }
    const other = await webCryptoSigned()
    expect(verifier.verify(other.jwk, signature, message)).toBe(false)
    expect(verifier.verify(jwk, other.signature, message)).toBe(false)
  })

  it("only accepts the raw 64-byte form: DER, short, long and degenerate signatures are false, not errors", async () => {
    const verifier = makeNodeEs256Verifier()
    const node = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const { x, y } = node.publicKey.export({ format: "jwk" })
    const jwk: PublicJwk = { kty: "EC", crv: "P-256", x: x!, y: y! }
    const der = new Uint8Array(sign("sha256", message, node.privateKey))
    const raw = new Uint8Array(sign("sha256", message, { key: node.privateKey, dsaEncoding: "ieee-p1363" }))
    expect(verifier.verify(jwk, raw, message)).toBe(true)
    expect(verifier.verify(jwk, der, message)).toBe(false) // a valid signature, but not in the envelope's form
    expect(verifier.verify(jwk, raw.subarray(0, 63), message)).toBe(false)
    expect(verifier.verify(jwk, Uint8Array.of(...raw, 0), message)).toBe(false)
    expect(verifier.verify(jwk, new Uint8Array(0), message)).toBe(false)
    expect(verifier.verify(jwk, new Uint8Array(64), message)).toBe(false) // r = s = 0
    expect(verifier.verify(jwk, new Uint8Array(64).fill(0xff), message)).toBe(false) // r, s >= n
  })

  it("answers false for JWKs that are not usable P-256 public keys", async () => {
    const verifier = makeNodeEs256Verifier()
    const { jwk, signature } = await webCryptoSigned()
    const offCurve = { ...jwk, y: jwk.x } // 32-byte coordinates, but almost surely not a curve point
    expect(verifier.verify(offCurve, signature, message)).toBe(false)
    expect(verifier.verify({ ...jwk, crv: "P-384" } as unknown as PublicJwk, signature, message)).toBe(false)
    expect(verifier.verify({ ...jwk, x: "short" }, signature, message)).toBe(false)
    expect(verifier.verify(null as unknown as PublicJwk, signature, message)).toBe(false)
    // Failures are not cached, so junk keys cannot push good ones out.
    expect(verifier.cachedKeys()).toBe(0)
  })

  it("stays within a small bound and still verifies evicted keys after importing them again", async () => {
    const bound = 8
    const verifier = makeNodeEs256Verifier({ cacheBound: bound })
    const signers = await Promise.all(Array.from({ length: bound + 5 }, webCryptoSigned))
    for (const { jwk, signature } of signers) {
      expect(verifier.verify(jwk, signature, message)).toBe(true)
      expect(verifier.cachedKeys()).toBeLessThanOrEqual(bound)
    }
    expect(verifier.cachedKeys()).toBe(bound)
    // The first keys were evicted; verifying with them re-imports them and still gives the right answers.
    for (const { jwk, signature } of signers.slice(0, 5)) {
      expect(verifier.verify(jwk, signature, message)).toBe(true)
      expect(verifier.verify(jwk, signers[12]!.signature, message)).toBe(false)
    }
    expect(verifier.cachedKeys()).toBe(bound)
  })

  it(`the default bound (${DEFAULT_PUBLIC_KEY_CACHE_BOUND}) holds after bound + 50 distinct attester keys`, async () => {
    const verifier = makeNodeEs256Verifier()
    const first = await webCryptoSigned()
    expect(verifier.verify(first.jwk, first.signature, message)).toBe(true)
    // The key is imported (and cached) before the signature check, so a dummy signature fills the cache cheaply.
    const dummy = new Uint8Array(64).fill(1)
    for (let i = 0; i < DEFAULT_PUBLIC_KEY_CACHE_BOUND + 50; i++) verifier.verify(freshPublicJwk(), dummy, message)
    expect(verifier.cachedKeys()).toBe(DEFAULT_PUBLIC_KEY_CACHE_BOUND)
    expect(verifier.verify(first.jwk, first.signature, message)).toBe(true)
    expect(verifier.cachedKeys()).toBe(DEFAULT_PUBLIC_KEY_CACHE_BOUND)
  })
})
