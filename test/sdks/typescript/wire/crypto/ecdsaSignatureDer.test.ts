import { generateKeyPairSync, sign, verify } from "node:crypto"
import { describe, expect, it } from "vitest"
import { p256DerToRaw, p256RawToDer } from "../../../../../sdks/typescript/src/wire/crypto/ecdsaSignatureDer.ts"

const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
const data = new TextEncoder().encode("der conversion")

describe("P-256 signature DER <-> raw r||s", () => {
  it("matches OpenSSL on real signatures: raw verifies as P1363, and DER -> raw -> DER is the identity", () => {
    // 200 signatures cover r/s with a set high bit (zero-padded INTEGER) and, now and then, a leading zero byte.
    for (let i = 0; i < 200; i++) {
      const der = new Uint8Array(sign("sha256", data, privateKey))
      const raw = p256DerToRaw(der)
      expect(raw.length).toBe(64)
      expect(verify("sha256", data, { key: publicKey, dsaEncoding: "ieee-p1363" }, raw)).toBe(true)
      expect(p256RawToDer(raw)).toEqual(der)
    }
  })

  it("encodes leading zeros minimally and pads a set high bit", () => {
    const raw = new Uint8Array(64)
    raw[31] = 0x01 // r = 1
    raw[32] = 0x80 // s = 0x80 followed by 31 zero bytes
    const der = p256RawToDer(raw)
    expect(Array.from(der.subarray(0, 7))).toEqual([0x30, 3 + 2 + 33, 0x02, 0x01, 0x01, 0x02, 0x21])
    expect(der[7]).toBe(0x00)
    expect(der[8]).toBe(0x80)
    expect(p256DerToRaw(der)).toEqual(raw)
    // r = 0 still encodes as one zero byte (OpenSSL then rejects it as a signature).
    expect(Array.from(p256RawToDer(new Uint8Array(64)))).toEqual([0x30, 6, 0x02, 1, 0, 0x02, 1, 0])
  })

  it("refuses raw signatures that are not 64 bytes and malformed DER", () => {
    expect(() => p256RawToDer(new Uint8Array(63))).toThrow(TypeError)
    expect(() => p256RawToDer(new Uint8Array(65))).toThrow(TypeError)
    const der = new Uint8Array(sign("sha256", data, privateKey))
    expect(() => p256DerToRaw(der.subarray(0, der.length - 1))).toThrow(TypeError)
    expect(() => p256DerToRaw(Uint8Array.of(...der, 0))).toThrow(TypeError)
    const wrongTag = Uint8Array.from(der)
    wrongTag[2] = 0x03
    expect(() => p256DerToRaw(wrongTag)).toThrow(TypeError)
    // An INTEGER wider than 32 bytes after dropping zero padding.
    const wide = Uint8Array.of(0x30, 0x26, 0x02, 0x21, ...new Uint8Array(33).fill(0x7f), 0x02, 0x01, 0x01)
    expect(() => p256DerToRaw(wide)).toThrow(TypeError)
  })
})
