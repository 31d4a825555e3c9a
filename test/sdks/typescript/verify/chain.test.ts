import { describe, expect, it } from "vitest"
import { buildAttestation } from "../../../../sdks/typescript/src/wire/attestation/v3.ts"
import { generateSigningKeyPair } from "../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { envelopeHash } from "../../../../sdks/typescript/src/wire/receipts/chain.ts"
import { signReceiptV2, type ReceiptV2 } from "../../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { encodeEnvelopeHeader } from "../../../../sdks/typescript/src/wire/receipts/header.ts"
import { verifyChain } from "../../../../sdks/typescript/src/verify/index.ts"
import { makeKey, NOW, NOW_SECONDS, unsignedV2 } from "../wire/receipts/fixtures.ts"

const key = await makeKey()
const jwks = { keys: [key.jwk] }
const options = { jwks, nowSeconds: NOW_SECONDS }

const chainOf = async (length: number): Promise<Array<ReceiptV2>> => {
  const out: Array<ReceiptV2> = []
  for (let seq = 1; seq <= length; seq++) {
    out.push(await signReceiptV2(unsignedV2(seq, seq === 1 ? undefined : await envelopeHash(out[seq - 2]!)), key.signer))
  }
  return out
}
const chain = await chainOf(4)

describe("verifyChain", () => {
  it("an intact export verifies, in any input form", async () => {
    const result = await verifyChain([chain[0]!, JSON.stringify(chain[1]), encodeEnvelopeHeader(chain[2]!), chain[3]!], options)
    expect(result).toEqual({ valid: true, chainId: "receipt-v2-org-org_1", firstSeq: 1, lastSeq: 4, verified: 4, break: null, gaps: [] })
  })

  it("an export that starts after seq 1 verifies from where it starts", async () => {
    expect(await verifyChain(chain.slice(2), options)).toMatchObject({ valid: true, firstSeq: 3, lastSeq: 4, verified: 2 })
  })

  it("an empty export is trivially intact", async () => {
    expect(await verifyChain([], options)).toEqual({ valid: true, chainId: null, firstSeq: null, lastSeq: null, verified: 0, break: null, gaps: [] })
  })

  it("a missing receipt: the break is at the receipt after the gap", async () => {
    const result = await verifyChain([chain[0]!, chain[1]!, chain[3]!], options)
    expect(result).toMatchObject({ valid: false, verified: 2 })
    expect(result.break).toMatchObject({
      index: 2,
      seq: 4,
      jti: chain[3]!.jti,
      reason: "chain linkage (seq and prev_hash): seq 4 does not follow previous seq 2"
    })
  })

  it("a changed receipt: the break is at that receipt, its signature", async () => {
    const result = await verifyChain([chain[0]!, { ...chain[1]!, output_tokens: 1 }, chain[2]!], options)
    expect(result.break).toMatchObject({ index: 1, seq: 2, reason: `signature: does not verify with key ${key.jwk.kid}` })
  })

  it("a re-signed receipt (valid signature, different bytes) breaks the NEXT link", async () => {
    const { sig: _s, signature: _t, ...unsigned } = { ...chain[1]!, output_tokens: 1 }
    const resigned = await signReceiptV2({ ...unsigned, chain: chain[1]!.chain }, key.signer)
    const result = await verifyChain([chain[0]!, resigned, chain[2]!], options)
    expect(result.break).toMatchObject({ index: 2, seq: 3, reason: "chain linkage (seq and prev_hash): prev_hash is not the hash of the previous receipt" })
  })

  it("receipts of two chains, or out of order, break at the first wrong one", async () => {
    const other = await chainOf(2)
    expect((await verifyChain([chain[0]!, other[1]!], options)).break).toMatchObject({
      index: 1,
      reason: "chain linkage (seq and prev_hash): prev_hash is not the hash of the previous receipt"
    })
    expect((await verifyChain([chain[1]!, chain[0]!], options)).break).toMatchObject({
      index: 1,
      reason: "chain linkage (seq and prev_hash): seq 1 does not follow previous seq 2"
    })
  })

  it("a v3 attestation in the list is named as not part of a chain", async () => {
    const attestation = await buildAttestation({
      route: "chat.completions",
      bodyBytes: new TextEncoder().encode("{}"),
      detectorsFired: {},
      engine: { id: "relay-ts", version: "0.1.0", sha256: "a".repeat(64) },
      keyPair: await generateSigningKeyPair(),
      now: NOW
    })
    const result = await verifyChain([chain[0]!, attestation], options)
    expect(result.break).toMatchObject({ index: 1, reason: "a v3 envelope is not part of a receipt chain" })
  })

  it("something that is not a list throws a TypeError", async () => {
    await expect(verifyChain("nope" as never, options)).rejects.toThrow(TypeError)
  })
})
