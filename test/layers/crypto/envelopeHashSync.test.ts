import { describe, expect, it } from "vitest"
import { envelopeHashSync } from "../../../layers/crypto/envelopeHashSync.ts"
import { nodeSignerFromPrivateJwk } from "../../../layers/crypto/nodeEs256Signer.ts"
import { exportPrivateJwk, exportPublicJwk, generateSigningKeyPair, jwkThumbprintKid } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { envelopeHash } from "../../../sdks/typescript/src/wire/receipts/chain.ts"
import { signFailedReceiptV2 } from "../../../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import { signReceiptV1 } from "../../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { signReceiptV2 } from "../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { makeKey, unsignedFailed, unsignedV1, unsignedV2 } from "../../sdks/typescript/wire/receipts/fixtures.ts"

describe("envelopeHashSync", () => {
  it("equals envelopeHash on v2, failed v2 and v1 receipts, chained over several links", async () => {
    const { signer } = await makeKey()
    let prevV2: string | undefined
    let prevV1: string | undefined
    for (let seq = 1; seq <= 4; seq++) {
      const v2 = await signReceiptV2(unsignedV2(seq, prevV2), signer)
      const v1 = await signReceiptV1(unsignedV1(seq, prevV1), signer)
      const failed = await signFailedReceiptV2(unsignedFailed(seq), signer)
      for (const envelope of [v2, v1, failed]) expect(envelopeHashSync(envelope)).toBe(await envelopeHash(envelope))
      prevV2 = envelopeHashSync(v2)
      prevV1 = envelopeHashSync(v1)
    }
  })

  it("equals envelopeHash for receipts signed by the node signer, and covers the signature", async () => {
    const pair = await generateSigningKeyPair({ extractable: true })
    const kid = await jwkThumbprintKid(await exportPublicJwk(pair.publicKey))
    const signer = nodeSignerFromPrivateJwk(kid, await exportPrivateJwk(pair.privateKey))
    const receipt = await signReceiptV2(unsignedV2(), signer)
    expect(envelopeHashSync(receipt)).toBe(await envelopeHash(receipt))
    const resigned = await signReceiptV2(unsignedV2(), signer)
    const { sig: _sig, signature: _signature, ...unsigned } = receipt
    expect(envelopeHashSync(unsigned)).not.toBe(envelopeHashSync(receipt))
    expect(envelopeHashSync(resigned)).not.toBe(envelopeHashSync(receipt)) // new jti and a fresh ECDSA nonce
  })

  it("is independent of member order and handles non-ASCII members", async () => {
    const a = { v: 2, extensions: { note: "Grüße 😀" }, chain: { seq: 1, chain_id: "c", prev_hash: "0".repeat(64) } }
    const b = { chain: { prev_hash: "0".repeat(64), chain_id: "c", seq: 1 }, extensions: { note: "Grüße 😀" }, v: 2 }
    expect(envelopeHashSync(a)).toBe(envelopeHashSync(b))
    expect(envelopeHashSync(a)).toBe(await envelopeHash(b))
  })
})
