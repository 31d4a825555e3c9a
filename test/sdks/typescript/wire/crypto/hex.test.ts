import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { bytesToHex, hexToBytes, isSha256Hex } from "../../../../../sdks/typescript/src/wire/crypto/hex.ts"

describe("hex", () => {
  it("encodes lowercase and agrees with Node's Buffer both ways", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const reference = Buffer.from(bytes).toString("hex")
        expect(bytesToHex(bytes)).toBe(reference)
        expect(Array.from(hexToBytes(reference.toUpperCase()))).toEqual(Array.from(bytes))
      })
    )
  })

  it("rejects odd lengths and non-hex characters", () => {
    expect(() => hexToBytes("abc")).toThrow()
    expect(() => hexToBytes("zz")).toThrow()
  })

  it("isSha256Hex accepts only 64 lowercase hex characters", () => {
    expect(isSha256Hex("a".repeat(64))).toBe(true)
    expect(isSha256Hex("A".repeat(64))).toBe(false)
    expect(isSha256Hex("a".repeat(63))).toBe(false)
    expect(isSha256Hex(42)).toBe(false)
  })
})
