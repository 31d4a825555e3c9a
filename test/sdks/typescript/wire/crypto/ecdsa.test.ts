import { p256 } from "@noble/curves/nist.js"
import { calculateJwkThumbprint, importJWK, importSPKI } from "jose"
import { createPublicKey } from "node:crypto"
import { describe, expect, it } from "vitest"
import { base64UrlEncode } from "../../../../../sdks/typescript/src/wire/crypto/base64.ts"
import {
  exportPrivateJwk,
  exportPublicJwk,
  generateSigningKeyPair,
  importPrivateJwk,
  importPublicJwk,
  jwkThumbprintKid,
  publicJwkToPem,
  signRaw,
  verifyRaw
} from "../../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { hexToBytes } from "../../../../../sdks/typescript/src/wire/crypto/hex.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)

// RFC 6979 appendix A.2.5: P-256, SHA-256, message "sample".
const RFC6979 = {
  d: "C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721",
  ux: "60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6",
  uy: "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299",
  r: "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716",
  s: "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"
}
const rfcPublicJwk = {
  kty: "EC" as const,
  crv: "P-256" as const,
  x: base64UrlEncode(hexToBytes(RFC6979.ux)),
  y: base64UrlEncode(hexToBytes(RFC6979.uy))
}

describe("ES256 with WebCrypto", () => {
  it("signs with a raw 64-byte r||s signature that verifies, and rejects other bytes or keys", async () => {
    const pair = await generateSigningKeyPair()
    const other = await generateSigningKeyPair()
    const signature = await signRaw(pair.privateKey, utf8("payload"))
    expect(signature.length).toBe(64)
    expect(await verifyRaw(pair.publicKey, signature, utf8("payload"))).toBe(true)
    expect(await verifyRaw(pair.publicKey, signature, utf8("payloaD"))).toBe(false)
    expect(await verifyRaw(other.publicKey, signature, utf8("payload"))).toBe(false)
    expect(await verifyRaw(pair.publicKey, signature.slice(0, 63), utf8("payload"))).toBe(false)
  })

  it("verifies the published RFC 6979 P-256/SHA-256 'sample' signature", async () => {
    const key = await importPublicJwk(rfcPublicJwk)
    const signature = hexToBytes(RFC6979.r + RFC6979.s)
    expect(await verifyRaw(key, signature, utf8("sample"))).toBe(true)
    expect(await verifyRaw(key, signature, utf8("Sample"))).toBe(false)
  })

  it("interoperates with @noble/curves in both directions", async () => {
    const privateKey = await importPrivateJwk({
      ...rfcPublicJwk,
      d: base64UrlEncode(hexToBytes(RFC6979.d))
    })
    const ours = await signRaw(privateKey, utf8("interop"))
    expect(p256.verify(ours, utf8("interop"), hexToBytes("04" + RFC6979.ux + RFC6979.uy), { lowS: false })).toBe(true)
    const theirs = p256.sign(utf8("interop"), hexToBytes(RFC6979.d))
    expect(await verifyRaw(await importPublicJwk(rfcPublicJwk), theirs, utf8("interop"))).toBe(true)
  })

  it("exports a public JWK with only kty, crv, x, y; private export and import round-trip", async () => {
    const pair = await generateSigningKeyPair()
    const jwk = await exportPublicJwk(pair.publicKey)
    expect(Object.keys(jwk).sort()).toEqual(["crv", "kty", "x", "y"])
    expect(await exportPublicJwk(pair.privateKey)).toEqual(jwk)
    const reimported = await importPrivateJwk(await exportPrivateJwk(pair.privateKey))
    const signature = await signRaw(reimported, utf8("again"))
    expect(await verifyRaw(await importPublicJwk(jwk), signature, utf8("again"))).toBe(true)
  })

  it("a non-extractable key pair keeps its private key inside the runtime", async () => {
    const pair = await generateSigningKeyPair({ extractable: false })
    await expect(exportPrivateJwk(pair.privateKey)).rejects.toThrow()
    expect((await exportPublicJwk(pair.publicKey)).kty).toBe("EC")
  })

  it("refuses JWKs that are not P-256 public keys", async () => {
    await expect(importPublicJwk({ kty: "EC", crv: "P-384", x: rfcPublicJwk.x, y: rfcPublicJwk.y })).rejects.toThrow()
    await expect(importPublicJwk({ kty: "EC", crv: "P-256", x: "short", y: rfcPublicJwk.y })).rejects.toThrow()
  })
})

describe("key encodings", () => {
  it("jwkThumbprintKid equals the RFC 7638 thumbprint computed by jose", async () => {
    const jwk = await exportPublicJwk((await generateSigningKeyPair()).publicKey)
    expect(await jwkThumbprintKid(jwk)).toBe(await calculateJwkThumbprint(jwk, "sha256"))
    expect(await jwkThumbprintKid(rfcPublicJwk)).toBe(await calculateJwkThumbprint(rfcPublicJwk, "sha256"))
  })

  it("publicJwkToPem yields SPKI PEM that Node and jose read back as the same key", async () => {
    const pair = await generateSigningKeyPair()
    const jwk = await exportPublicJwk(pair.publicKey)
    const pem = publicJwkToPem(jwk)
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n([A-Za-z0-9+/=]{1,64}\n)+-----END PUBLIC KEY-----\n$/)
    const viaNode = createPublicKey(pem).export({ format: "jwk" })
    expect({ kty: viaNode.kty, crv: viaNode.crv, x: viaNode.x, y: viaNode.y }).toEqual(jwk)
    const viaJose = await importSPKI(pem, "ES256")
    const signature = await signRaw(pair.privateKey, utf8("pem"))
    expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, viaJose as CryptoKey, signature as Uint8Array<ArrayBuffer>, utf8("pem"))).toBe(true)
  })

  it("an exported public JWK imported by jose verifies our signatures", async () => {
    const pair = await generateSigningKeyPair()
    const joseKey = (await importJWK(await exportPublicJwk(pair.publicKey), "ES256")) as CryptoKey
    const signature = await signRaw(pair.privateKey, utf8("jose"))
    expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, joseKey, signature as Uint8Array<ArrayBuffer>, utf8("jose"))).toBe(true)
  })
})
