import { generateKeyPairSync } from "node:crypto"
import { compactVerify, importJWK } from "jose"
import { describe, expect, it } from "vitest"
import { importPrivateJwkKeyObject, nodeSignerFromKeyObject, nodeSignerFromPrivateJwk } from "../../../layers/crypto/nodeEs256Signer.ts"
import { base64UrlDecode, base64UrlEncode } from "../../../sdks/typescript/src/wire/crypto/base64.ts"
import {
  exportPrivateJwk,
  exportPublicJwk,
  generateSigningKeyPair,
  importPrivateJwk,
  importPublicJwk,
  jwkThumbprintKid,
  verifyRaw,
  type PrivateJwk
} from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { signReceiptV1 } from "../../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { signReceiptV2 } from "../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { signingInput } from "../../../sdks/typescript/src/wire/receipts/signing-input.ts"
import { unsignedV1, unsignedV2 } from "../../sdks/typescript/wire/receipts/fixtures.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)

/** A WebCrypto-generated key pair, as ReceiptKeysPg stores it: the private JWK plus the public JWK and kid. */
const storedKey = async () => {
  const pair = await generateSigningKeyPair({ extractable: true })
  const publicJwk = await exportPublicJwk(pair.publicKey)
  return { privateJwk: await exportPrivateJwk(pair.privateKey), publicJwk, kid: await jwkThumbprintKid(publicJwk) }
}

describe("nodeSignerFromPrivateJwk", () => {
  it("signs raw 64-byte r||s that WebCrypto verifyRaw accepts for the same public JWK", async () => {
    const key = await storedKey()
    const signer = nodeSignerFromPrivateJwk(key.kid, key.privateJwk)
    expect(signer.kid).toBe(key.kid)
    const publicKey = await importPublicJwk(key.publicJwk)
    for (let i = 0; i < 20; i++) {
      const bytes = utf8(`message ${i}`)
      const signature = await signer.sign(bytes)
      expect(signature).toBeInstanceOf(Uint8Array)
      expect(signature.length).toBe(64)
      expect(await verifyRaw(publicKey, signature, bytes)).toBe(true)
      expect(await verifyRaw(publicKey, signature, utf8(`message ${i + 1}`))).toBe(false)
    }
  })

  it("produces ES256 signatures jose verifies as a compact JWS with the public JWK", async () => {
    const key = await storedKey()
    const signer = nodeSignerFromPrivateJwk(key.kid, key.privateJwk)
    const joseKey = await importJWK({ ...key.publicJwk }, "ES256")
    const protectedHeader = base64UrlEncode(utf8(JSON.stringify({ alg: "ES256", kid: key.kid })))
    const payload = base64UrlEncode(utf8(JSON.stringify({ hello: "world", n: 42 })))
    const signature = await signer.sign(utf8(`${protectedHeader}.${payload}`))
    const jws = `${protectedHeader}.${payload}.${base64UrlEncode(signature)}`
    const verified = await compactVerify(jws, joseKey)
    expect(new TextDecoder().decode(verified.payload)).toBe('{"hello":"world","n":42}')
    expect(verified.protectedHeader.kid).toBe(key.kid)
    const tampered = `${protectedHeader}.${base64UrlEncode(utf8('{"hello":"world","n":43}'))}.${base64UrlEncode(signature)}`
    await expect(compactVerify(tampered, joseKey)).rejects.toThrow()
  })

  it("signs v2 and v1 receipts whose sig verifies over the envelope's signing input", async () => {
    const key = await storedKey()
    const signer = nodeSignerFromPrivateJwk(key.kid, key.privateJwk)
    const publicKey = await importPublicJwk(key.publicJwk)
    const v2 = await signReceiptV2(unsignedV2(), signer)
    const v1 = await signReceiptV1(unsignedV1(), signer)
    expect(v2.kid).toBe(key.kid)
    expect(await verifyRaw(publicKey, base64UrlDecode(v2.sig), signingInput(v2))).toBe(true)
    expect(await verifyRaw(publicKey, base64UrlDecode(v1.sig), signingInput(v1))).toBe(true)
  })

  it("ignores extra JWK members (key_ops, ext) as WebCrypto exports them", async () => {
    const key = await storedKey()
    const withExtras = { ...key.privateJwk, key_ops: ["sign"], ext: true } as PrivateJwk
    const signature = await nodeSignerFromPrivateJwk(key.kid, withExtras).sign(utf8("x"))
    expect(await verifyRaw(await importPublicJwk(key.publicJwk), signature, utf8("x"))).toBe(true)
  })

  it("refuses keys that are not P-256 private keys when the signer is built, not when it signs", () => {
    const p384 = generateKeyPairSync("ec", { namedCurve: "P-384" })
    expect(() => nodeSignerFromKeyObject("k", p384.privateKey)).toThrow(/P-256/)
    const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" })
    expect(() => nodeSignerFromKeyObject("k", p256.publicKey)).toThrow(/private key/)
    const ed = generateKeyPairSync("ed25519")
    expect(() => nodeSignerFromKeyObject("k", ed.privateKey)).toThrow(/EC private key/)
    const jwk = p256.privateKey.export({ format: "jwk" }) as unknown as PrivateJwk
    expect(() => importPrivateJwkKeyObject({ ...jwk, crv: "P-384" as "P-256" })).toThrow(TypeError)
    expect(() => importPrivateJwkKeyObject({ ...jwk, d: "not-a-scalar" })).toThrow(TypeError)
  })

  it("refuses a private JWK whose d belongs to another key (node alone would accept it and sign unverifiably)", async () => {
    const a = await storedKey()
    const b = await storedKey()
    const mismatched = { ...a.privateJwk, d: b.privateJwk.d }
    expect(() => nodeSignerFromPrivateJwk(a.kid, mismatched)).toThrow(/does not belong/)
    // WebCrypto refuses the same JWK, so this keeps the old import's behaviour.
    await expect(importPrivateJwk(mismatched)).rejects.toThrow()
  })
})
