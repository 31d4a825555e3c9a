import { describe, expect, it } from "vitest"
import { bytesToHex } from "../../../../sdks/typescript/src/wire/crypto/hex.ts"
import { envelopeHash, rfc3339Millis } from "../../../../sdks/typescript/src/wire/receipts/chain.ts"
import { signReceiptV2, type ReceiptV2 } from "../../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { MerkleTree, receiptLeafHash } from "../../../../sdks/typescript/src/wire/receipts/merkle.ts"
import { signEnvelope } from "../../../../sdks/typescript/src/wire/receipts/signer.ts"
import { verifyInclusionProof } from "../../../../sdks/typescript/src/verify/index.ts"
import { makeKey, NOW, unsignedV2, type TestKey } from "../wire/receipts/fixtures.ts"

const key = await makeKey()
const jwks = { keys: [key.jwk] }

const receipts: Array<ReceiptV2> = []
for (let i = 0; i < 7; i++) receipts.push(await signReceiptV2(unsignedV2(), key.signer))
const tree = new MerkleTree()
for (const r of receipts) await tree.append(await receiptLeafHash(await envelopeHash(r)))

const signHead = async (size: number, signer: TestKey = key) => {
  const body = {
    v: "transparency-sth-v1" as const,
    alg: "ES256" as const,
    kid: signer.jwk.kid,
    iss: "http://127.0.0.1:8080",
    tree_size: size,
    root_hash: bytesToHex(await tree.rootHash(size)),
    timestamp: rfc3339Millis(NOW)
  }
  return { ...body, sig: await signEnvelope(body, (bytes) => signer.signer.sign(bytes)) }
}
const sth = await signHead(7)

const proofFor = async (index: number, size = 7) => {
  const receiptHash = await envelopeHash(receipts[index]!)
  return {
    receipt_id: receipts[index]!.jti,
    leaf_index: index,
    tree_size: size,
    receipt_hash: receiptHash,
    leaf_hash: bytesToHex(await receiptLeafHash(receiptHash)),
    audit_path: (await tree.inclusionProof(index, size)).map(bytesToHex),
    sth: await signHead(size)
  }
}

describe("verifyInclusionProof", () => {
  it("proves every leaf of a 7-leaf tree, with the head given or taken from the proof, tied to its receipt", async () => {
    for (let i = 0; i < 7; i++) {
      const proof = await proofFor(i)
      const withHead = await verifyInclusionProof(proof, sth, { jwks, receipt: receipts[i]! })
      expect(withHead).toMatchObject({ valid: true, reason: null })
      expect(withHead.checks.map((c) => c.label)).toEqual(["signed tree head", "proof schema", "leaf hash", "inclusion"])
      expect((await verifyInclusionProof(JSON.stringify(proof), null, { jwks })).valid).toBe(true)
    }
  })

  it("a proof for another tree size than the head fails, naming both sizes", async () => {
    const result = await verifyInclusionProof(await proofFor(2, 5), sth, { jwks })
    expect(result.reason).toBe("proof schema: the proof is for tree size 5, the tree head for 7")
  })

  it("a changed audit path or leaf index does not lead to the root", async () => {
    const proof = await proofFor(3)
    const swapped = { ...proof, audit_path: [...proof.audit_path].reverse() }
    expect((await verifyInclusionProof(swapped, sth, { jwks })).reason).toBe("inclusion: the audit path does not lead to the tree head's root_hash")
    expect((await verifyInclusionProof({ ...proof, leaf_index: 2 }, sth, { jwks })).valid).toBe(false)
  })

  it("a proof about another receipt, or a leaf hash that is not H(0x00 || receipt_hash), fails at the leaf", async () => {
    const proof = await proofFor(1)
    expect((await verifyInclusionProof(proof, sth, { jwks, receipt: receipts[2]! })).reason).toBe(
      `leaf hash: the proof is for receipt ${receipts[1]!.jti}, not ${receipts[2]!.jti}`
    )
    expect((await verifyInclusionProof(proof, sth, { jwks, receipt: { ...receipts[1]!, model: "x" } })).reason).toBe(
      "leaf hash: receipt_hash is not the hash of the supplied receipt"
    )
    expect((await verifyInclusionProof({ ...proof, leaf_hash: proof.receipt_hash }, sth, { jwks })).reason).toBe(
      "leaf hash: leaf_hash is not SHA-256(0x00 || receipt_hash)"
    )
  })

  it("a head with a forged root, a foreign key or an unknown kid fails at the signed tree head", async () => {
    const forged = { ...sth, root_hash: "0".repeat(64) }
    expect((await verifyInclusionProof(await proofFor(0), forged, { jwks })).reason).toBe(`signed tree head: does not verify with key ${key.jwk.kid}`)
    const stranger = await makeKey()
    const foreign = await signHead(7, stranger)
    expect((await verifyInclusionProof(await proofFor(0), foreign, { jwks })).reason).toBe(
      `signed tree head: no published verification key has kid ${stranger.jwk.kid}`
    )
    expect((await verifyInclusionProof(await proofFor(0), { ...sth, alg: "none" }, { jwks })).reason).toBe(
      "signed tree head: alg none is not allowed; expected ES256"
    )
  })

  it("a malformed proof fails the schema check and never throws", async () => {
    expect((await verifyInclusionProof({ receipt_id: "x" }, sth, { jwks })).reason).toBe("proof schema: receipt_id must be 32 lowercase hex")
    const proof = await proofFor(0)
    expect((await verifyInclusionProof({ ...proof, leaf_index: 9 }, sth, { jwks })).reason).toBe("proof schema: leaf_index 9 is not in a tree of 7")
    expect((await verifyInclusionProof("garbage", "garbage", { jwks })).reason).toBe("signed tree head: the tree head is not a JSON object")
  })
})
