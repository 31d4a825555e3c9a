import { describe, expect, it } from "vitest"
import { receiptLeafHashHexSync } from "../../../layers/crypto/receiptLeafHashSync.ts"
import { bytesToHex } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { receiptLeafHash } from "../../../sdks/typescript/src/wire/receipts/merkle.ts"

describe("receiptLeafHashHexSync", () => {
  it("equals the portable receiptLeafHash (RFC 9162 leaf: 0x00 prefix) for several envelope hashes", async () => {
    for (const hex of ["0".repeat(64), "f".repeat(64), "0123456789abcdef".repeat(4), "9b74c9897bac770ffc029102a200c5de".repeat(2)]) {
      expect(receiptLeafHashHexSync(hex)).toBe(bytesToHex(await receiptLeafHash(hex)))
    }
  })

  it("is the domain-separated hash, not the plain SHA-256 of the 32 bytes", async () => {
    const hex = "ab".repeat(32)
    const plain = bytesToHex(new Uint8Array(await crypto.subtle.digest("SHA-256", Buffer.from(hex, "hex"))))
    expect(receiptLeafHashHexSync(hex)).not.toBe(plain)
  })
})
