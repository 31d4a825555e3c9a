import { describe, expect, it } from "vitest"
import { bytesToHex } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { envelopeHash } from "../../../sdks/typescript/src/wire/receipts/chain.ts"
import { keyResolverFromJwks } from "../../../sdks/typescript/src/wire/receipts/jwks.ts"
import { MerkleTree, receiptLeafHash } from "../../../sdks/typescript/src/wire/receipts/merkle.ts"
import {
  verifyConsistencyProof as coreVerifyConsistency,
  verifyInclusionProof as coreVerify
} from "../../../sdks/typescript/src/wire/receipts/transparency.ts"
import { verifyConsistencyProof, verifyInclusionProof } from "../../../sdks/typescript/src/verify/index.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const t = readVectors("transparency.json")
const r = readVectors("receipts.json")

describe("transparency.json", () => {
  it("the leaves are the envelope hashes of the receipts in receipts.json, and the gateway's tree gives the head's root", async () => {
    const all = [...r.receipts.v2, ...r.receipts.failed]
    const tree = new MerkleTree()
    for (const leaf of t.leaves) {
      const receipt = all.find((x: { jti: string }) => x.jti === leaf.jti)
      expect(await envelopeHash(receipt)).toBe(leaf.receipt_hash)
      await tree.append(await receiptLeafHash(leaf.receipt_hash))
    }
    expect(bytesToHex(await tree.rootHash())).toBe(t.cases[0].sth.root_hash)
  })

  it.each(rows(t.cases))("%s", async (_n, c: any) => {
    expect(await verifyInclusionProof(c.proof, c.sth, { jwks: t.jwks, ...(c.receipt === undefined ? {} : { receipt: c.receipt }) })).toEqual(c.expected)
    expect(await coreVerify(c.proof, c.sth, { resolveKey: keyResolverFromJwks(t.jwks), receipt: c.receipt })).toEqual(c.expected)
  })

  it.each(rows(t.consistency))("consistency: %s", async (_n, c: any) => {
    const newHead = c.new_head === undefined ? {} : { newHead: c.new_head }
    expect(await verifyConsistencyProof(c.proof, c.old_head, { jwks: t.jwks, ...newHead })).toEqual(c.expected)
    expect(await coreVerifyConsistency(c.proof, c.old_head, { resolveKey: keyResolverFromJwks(t.jwks), ...newHead })).toEqual(c.expected)
  })

  it("the consistency proofs are the gateway's tree's, and the heads' roots its roots", async () => {
    const tree = new MerkleTree()
    for (const leaf of t.leaves) await tree.append(await receiptLeafHash(leaf.receipt_hash))
    for (const c of t.consistency.filter((x: any) => x.expected.valid && x.proof !== null)) {
      expect((await tree.consistencyProof(c.proof.first, c.proof.second)).map(bytesToHex)).toEqual(c.proof.consistency_path)
      expect(c.old_head.root_hash).toBe(bytesToHex(await tree.rootHash(c.old_head.tree_size)))
    }
  })
})
