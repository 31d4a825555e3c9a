import canonicalize from "canonicalize"
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  envelopeHash,
  failedChainId,
  GENESIS_PREV_HASH,
  newJti,
  rfc3339Millis,
  unixSeconds,
  v1ChainId,
  v2ChainId
} from "../../../../../sdks/typescript/src/wire/receipts/chain.ts"
import { signReceiptV2 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { makeKey, unsignedV2 } from "./fixtures.ts"

describe("chain primitives", () => {
  it("genesis prev_hash is 64 zeros and chain ids follow the design", () => {
    expect(GENESIS_PREV_HASH).toBe("0000000000000000000000000000000000000000000000000000000000000000")
    expect(v2ChainId("o1")).toBe("receipt-v2-org-o1")
    expect(v1ChainId("a1")).toBe("tenant-a1")
    expect(failedChainId("o1")).toBe("failed-v2-org-o1")
  })

  it("newJti is 32 lowercase hex and does not repeat", () => {
    const jtis = new Set(Array.from({ length: 1000 }, newJti))
    expect(jtis.size).toBe(1000)
    for (const jti of jtis) expect(jti).toMatch(/^[0-9a-f]{32}$/)
  })

  it("rfc3339Millis is UTC with milliseconds and Z; unixSeconds floors", () => {
    const date = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6))
    expect(rfc3339Millis(date)).toBe("2024-01-02T03:04:05.006Z")
    expect(unixSeconds(new Date(1_700_000_000_999))).toBe(1_700_000_000)
  })

  it("envelopeHash is SHA-256 of the JCS bytes including the signature", async () => {
    const { signer } = await makeKey()
    const receipt = await signReceiptV2(unsignedV2(), signer)
    const independent = createHash("sha256").update(canonicalize(receipt)!, "utf8").digest("hex")
    expect(await envelopeHash(receipt)).toBe(independent)
    const { signature: _a, sig: _b, ...unsigned } = receipt
    expect(await envelopeHash(unsigned)).not.toBe(independent)
  })
})
