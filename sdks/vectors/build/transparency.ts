// transparency.json: a transparency log over the vector receipts, its signed tree head and inclusion proofs, and what
// verifyInclusionProof answers for them and for tampered copies.
import { bytesToHex } from "../../typescript/src/wire/crypto/hex.ts"
import { envelopeHash, rfc3339Millis } from "../../typescript/src/wire/receipts/chain.ts"
import { MerkleTree, receiptLeafHash } from "../../typescript/src/wire/receipts/merkle.ts"
import { signEnvelope } from "../../typescript/src/wire/receipts/signer.ts"
import { verifyInclusionProof } from "../../typescript/src/verify/index.ts"
import { receiptJwkOf, signerOf, VECTOR_NOW, type FixedKey } from "./keys.ts"
import { VECTOR_ISS, type VectorReceipts } from "./receipts.ts"

export const buildTransparencyVectors = async (gateway: FixedKey, receipts: VectorReceipts) => {
  const logged = [receipts.v2[0]!, receipts.failed[0]!, receipts.v2[1]!, receipts.v2[2]!, receipts.failed[1]!]
  const tree = new MerkleTree()
  const hashes = await Promise.all(logged.map((r) => envelopeHash(r)))
  for (const hash of hashes) await tree.append(await receiptLeafHash(hash))
  const signer = signerOf(gateway)
  const head = async (size: number) => {
    const body = {
      v: "transparency-sth-v1" as const,
      alg: "ES256" as const,
      kid: signer.kid,
      iss: VECTOR_ISS,
      tree_size: size,
      root_hash: bytesToHex(await tree.rootHash(size)),
      timestamp: rfc3339Millis(VECTOR_NOW)
    }
    return { ...body, sig: await signEnvelope(body, (bytes) => signer.sign(bytes)) }
  }
  const proof = async (index: number, size: number) => ({
    receipt_id: logged[index]!.jti,
    leaf_index: index,
    tree_size: size,
    receipt_hash: hashes[index]!,
    leaf_hash: bytesToHex(await receiptLeafHash(hashes[index]!)),
    audit_path: (await tree.inclusionProof(index, size)).map(bytesToHex),
    sth: await head(size)
  })
  const jwks = { keys: [receiptJwkOf(gateway)] }
  const sth = await head(logged.length)
  const p2 = await proof(2, logged.length)
  const cases: Array<{ name: string; proof: unknown; sth: unknown; receipt?: unknown }> = []
  for (let i = 0; i < logged.length; i++) cases.push({ name: `leaf ${i} of ${logged.length}, with its receipt`, proof: await proof(i, logged.length), sth, receipt: logged[i] })
  cases.push(
    { name: "leaf 1 of the tree of 3 (an older head)", proof: await proof(1, 3), sth: await head(3) },
    { name: "proof for tree size 3 against the head of 5", proof: await proof(1, 3), sth },
    { name: "audit path reversed", proof: { ...p2, audit_path: [...p2.audit_path].reverse() }, sth },
    { name: "leaf index changed", proof: { ...p2, leaf_index: 3 }, sth },
    { name: "leaf hash not derived from receipt_hash", proof: { ...p2, leaf_hash: p2.receipt_hash }, sth },
    { name: "proof about another receipt than the one supplied", proof: p2, sth, receipt: logged[0] },
    { name: "tree head with a forged root_hash", proof: p2, sth: { ...sth, root_hash: "0".repeat(64) } },
    { name: "tree head signed under an unknown kid", proof: p2, sth: { ...sth, kid: "unknown-kid-not-in-the-jwks" } }
  )
  return {
    description:
      "Transparency log (RFC 9162 Merkle tree) over five vector receipts (receipts.json), in log order: v2 seq 1, failed seq 1, v2 seq 2, v2 seq 3, failed seq 2. leaf data = the 32 bytes of the receipt's envelope hash, leaf hash = SHA-256(0x00 || data), node = SHA-256(0x01 || left || right). The signed tree head's `sig` covers its JCS bytes without `sig`, with the receipt key named by `kid` (same JWKS as receipts.json). `cases`: verifyInclusionProof(proof, sth, { jwks, receipt? }) must answer `expected` exactly (valid, reason, checks).",
    version: 1,
    jwks,
    leaves: logged.map((r, i) => ({ jti: r.jti, receipt_hash: hashes[i] })),
    cases: await Promise.all(cases.map(async (c) => ({
      ...c,
      expected: await verifyInclusionProof(c.proof as object, c.sth as object, { jwks, ...(c.receipt === undefined ? {} : { receipt: c.receipt as object }) })
    })))
  }
}
