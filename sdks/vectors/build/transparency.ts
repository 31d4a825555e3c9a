// transparency.json: a transparency log over the vector receipts, its signed tree head and inclusion proofs, and what
// verifyInclusionProof answers for them and for tampered copies.
import { bytesToHex } from "../../typescript/src/wire/crypto/hex.ts"
import { envelopeHash, rfc3339Millis } from "../../typescript/src/wire/receipts/chain.ts"
import { MerkleTree, receiptLeafHash } from "../../typescript/src/wire/receipts/merkle.ts"
import { signEnvelope } from "../../typescript/src/wire/receipts/signer.ts"
import { verifyConsistencyProof, verifyInclusionProof } from "../../typescript/src/verify/index.ts"
import { receiptJwkOf, signerOf, VECTOR_NOW, type FixedKey } from "./keys.ts"
import { VECTOR_ISS, type VectorReceipts } from "./receipts.ts"

/**
 * `gateway` signs the log's heads; `previousKey` is the key it used before a rotation (heads kept from then must still
 * verify: every key stays in the JWKS).
 */
export const buildTransparencyVectors = async (gateway: FixedKey, previousKey: FixedKey, receipts: VectorReceipts) => {
  const logged = [receipts.v2[0]!, receipts.failed[0]!, receipts.v2[1]!, receipts.v2[2]!, receipts.failed[1]!]
  const tree = new MerkleTree()
  const hashes = await Promise.all(logged.map((r) => envelopeHash(r)))
  for (const hash of hashes) await tree.append(await receiptLeafHash(hash))
  const signer = signerOf(gateway)
  const head = async (size: number, options: { key?: FixedKey; rootHash?: string; iss?: string } = {}) => {
    const by = options.key === undefined ? signer : signerOf(options.key)
    const body = {
      v: "transparency-sth-v1" as const,
      alg: "ES256" as const,
      kid: by.kid,
      iss: options.iss ?? VECTOR_ISS,
      tree_size: size,
      root_hash: options.rootHash ?? bytesToHex(await tree.rootHash(size)),
      timestamp: rfc3339Millis(VECTOR_NOW)
    }
    return { ...body, sig: await signEnvelope(body, (bytes) => by.sign(bytes)) }
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
  const jwks = { keys: [receiptJwkOf(gateway), receiptJwkOf(previousKey)] }
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
  const consistencyProof = async (first: number, second: number) => ({
    first,
    second,
    consistency_path: (await tree.consistencyProof(first, second)).map(bytesToHex),
    sth: await head(second)
  })
  const size = logged.length
  const p3 = await consistencyProof(3, size)
  const flip = (hex: string) => (hex[0] === "0" ? "1" : "0") + hex.slice(1)
  const consistency: Array<{ name: string; proof: unknown; old_head: unknown; new_head?: unknown }> = []
  for (let first = 1; first <= size; first++) {
    consistency.push({ name: `from the head of ${first} to the head of ${size}`, proof: await consistencyProof(first, size), old_head: await head(first) })
  }
  consistency.push(
    { name: "from the head of 2 to the head of 4 (an older pair)", proof: await consistencyProof(2, 4), old_head: await head(2) },
    { name: "the old head signed with the key used before a rotation", proof: p3, old_head: await head(3, { key: previousKey }) },
    { name: "the new head given apart from the proof", proof: { ...p3, sth: "ignored when new_head is given" }, old_head: await head(3), new_head: p3.sth },
    { name: "an empty old log: every log extends it", proof: null, old_head: await head(0), new_head: sth },
    { name: "an old head of 0 leaves with another root than the empty tree's", proof: null, old_head: await head(0, { rootHash: "0".repeat(64) }), new_head: sth },
    { name: "rollback: the new head has fewer leaves than the old one", proof: { first: size, second: 3, consistency_path: [], sth: await head(3) }, old_head: sth },
    { name: "fork: a second signed root for the same tree size", proof: { first: size, second: size, consistency_path: [], sth }, old_head: await head(size, { rootHash: "ab".repeat(32) }) },
    { name: "fork: the old head's root is not a prefix of the new tree", proof: p3, old_head: await head(3, { rootHash: (await head(2)).root_hash }) },
    { name: "a consistency path hash changed", proof: { ...p3, consistency_path: p3.consistency_path.map((h, i) => (i === 0 ? flip(h) : h)) }, old_head: await head(3) },
    { name: "a consistency path hash dropped", proof: { ...p3, consistency_path: p3.consistency_path.slice(1) }, old_head: await head(3) },
    { name: "a consistency path hash added", proof: { ...p3, consistency_path: [...p3.consistency_path, p3.consistency_path[0]] }, old_head: await head(3) },
    { name: "the proof is for other sizes than the heads", proof: await consistencyProof(2, size), old_head: await head(3) },
    { name: "the proof's path is not hex", proof: { ...p3, consistency_path: ["not hex"] }, old_head: await head(3) },
    { name: "the proof is not an object", proof: "not a proof", old_head: await head(3), new_head: sth },
    { name: "the old head changed after it was signed", proof: p3, old_head: { ...(await head(3)), root_hash: (await head(3)).root_hash.replace(/^./, (c) => (c === "0" ? "1" : "0")) } },
    { name: "the new head is of another log", proof: { ...p3, sth: await head(size, { iss: "https://other-relay.example" }) }, old_head: await head(3) },
    { name: "the new head signed under an unknown kid", proof: { ...p3, sth: { ...sth, kid: "unknown-kid-not-in-the-jwks" } }, old_head: await head(3) },
    { name: "the old head is not a tree head", proof: p3, old_head: { tree_size: 3 } }
  )
  return {
    description:
      "Transparency log (RFC 9162 Merkle tree) over five vector receipts (receipts.json), in log order: v2 seq 1, failed seq 1, v2 seq 2, v2 seq 3, failed seq 2. leaf data = the 32 bytes of the receipt's envelope hash, leaf hash = SHA-256(0x00 || data), node = SHA-256(0x01 || left || right). The signed tree head's `sig` covers its JCS bytes without `sig`, with the receipt key named by `kid` (same JWKS as receipts.json). `cases`: verifyInclusionProof(proof, sth, { jwks, receipt? }) must answer `expected` exactly (valid, reason, checks). `consistency`: verifyConsistencyProof(proof, old_head, { jwks, new_head? }) (new_head defaults to proof.sth) must answer `expected` exactly: the checks \"old tree head\", \"new tree head\" (same iss), \"proof schema\" (sizes equal the heads'; a smaller new head is a rollback; an old head of 0 leaves needs no proof but the empty tree's root) and \"consistency\" (RFC 9162 section 2.1.4.2). The JWKS holds the current key and the one used before a rotation.",
    version: 1,
    jwks,
    leaves: logged.map((r, i) => ({ jti: r.jti, receipt_hash: hashes[i] })),
    cases: await Promise.all(cases.map(async (c) => ({
      ...c,
      expected: await verifyInclusionProof(c.proof as object, c.sth as object, { jwks, ...(c.receipt === undefined ? {} : { receipt: c.receipt as object }) })
    }))),
    consistency: await Promise.all(consistency.map(async (c) => ({
      ...c,
      expected: await verifyConsistencyProof(c.proof as object, c.old_head as object, { jwks, ...(c.new_head === undefined ? {} : { newHead: c.new_head as object }) })
    })))
  }
}
