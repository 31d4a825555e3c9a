// merkle-proofs.json: RFC 9162 inclusion and consistency proofs on bare hashes (no signatures): the published test
// data of transparency-dev/merkle (imported from build/transparency-dev-merkle.json), every proof of the RFC 6962
// reference tree of eight leaves, and mutations of them that must all be rejected. The expected verdicts of the
// imported cases are upstream's (`wantErr`), never our verifier's; generation fails if our verifier disagrees with any
// case, so the file cannot hold a verdict the reference implementation does not reproduce.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { bytesToHex, hexToBytes } from "../../typescript/src/wire/crypto/hex.ts"
import { MerkleTree, merkleLeafHash, verifyConsistency, verifyInclusion } from "../../typescript/src/wire/receipts/merkle.ts"

/** RFC 6962's reference leaves (the data, hex), as in certificate-transparency's and transparency-dev's tests. */
export const REFERENCE_LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"]

interface UpstreamInclusion {
  file: string
  leafIdx: number
  treeSize: number
  root: string | null
  leafHash: string | null
  proof: Array<string> | null
  desc: string
  wantErr: boolean
}
interface UpstreamConsistency {
  file: string
  size1: number
  size2: number
  root1: string | null
  root2: string | null
  proof: Array<string> | null
  desc: string
  wantErr: boolean
}

interface InclusionCase {
  name: string
  origin: string
  leaf_index: number
  tree_size: number
  leaf_hash: string
  root_hash: string
  audit_path: Array<string>
  valid: boolean
}
interface ConsistencyCase {
  name: string
  origin: string
  first: number
  second: number
  first_root: string
  second_root: string
  consistency_path: Array<string>
  valid: boolean
}

const hexOfBase64 = (value: string | null) => (value === null ? "" : Buffer.from(value, "base64").toString("hex"))
/** Bit `bit` (0 = the lowest bit of the first byte) of a hex hash flipped. */
const flipBit = (hex: string, bit: number) => {
  const bytes = hexToBytes(hex)
  bytes[bit >> 3]! ^= 1 << (bit & 7)
  return bytesToHex(bytes)
}

const inclusionVerdict = (c: InclusionCase) =>
  verifyInclusion({
    leafHash: hexToBytes(c.leaf_hash),
    index: c.leaf_index,
    treeSize: c.tree_size,
    auditPath: c.audit_path.map(hexToBytes),
    rootHash: hexToBytes(c.root_hash)
  })
const consistencyVerdict = (c: ConsistencyCase) =>
  verifyConsistency({
    first: c.first,
    second: c.second,
    firstRoot: hexToBytes(c.first_root),
    secondRoot: hexToBytes(c.second_root),
    proof: c.consistency_path.map(hexToBytes)
  })

/** Tree sizes whose proofs are also mutated (all first sizes below each). */
const MUTATED_SIZES = [5, 7, 8]

export const buildMerkleProofVectors = async () => {
  const upstream = JSON.parse(readFileSync(join(import.meta.dirname, "transparency-dev-merkle.json"), "utf8")) as {
    source: string
    commit: string
    license: string
    inclusion: Array<UpstreamInclusion>
    consistency: Array<UpstreamConsistency>
  }
  const tree = new MerkleTree()
  const leafHashes: Array<string> = []
  for (const leaf of REFERENCE_LEAVES) {
    const hash = await merkleLeafHash(hexToBytes(leaf))
    leafHashes.push(bytesToHex(hash))
    await tree.append(hash)
  }
  const roots = await Promise.all(Array.from({ length: REFERENCE_LEAVES.length + 1 }, async (_, n) => bytesToHex(await tree.rootHash(n))))

  const inclusion: Array<InclusionCase> = upstream.inclusion.map((c) => ({
    name: `transparency-dev: ${c.file.replace(/^testdata\/inclusion\//, "").replace(/\.json$/, "")} (${c.desc})`,
    origin: `transparency-dev/merkle ${c.file}`,
    leaf_index: c.leafIdx,
    tree_size: c.treeSize,
    leaf_hash: hexOfBase64(c.leafHash),
    root_hash: hexOfBase64(c.root),
    audit_path: (c.proof ?? []).map(hexOfBase64),
    valid: !c.wantErr
  }))
  const consistency: Array<ConsistencyCase> = upstream.consistency.map((c) => ({
    name: `transparency-dev: ${c.file.replace(/^testdata\/consistency\//, "").replace(/\.json$/, "")} (${c.desc})`,
    origin: `transparency-dev/merkle ${c.file}`,
    first: c.size1,
    second: c.size2,
    first_root: hexOfBase64(c.root1),
    second_root: hexOfBase64(c.root2),
    consistency_path: (c.proof ?? []).map(hexOfBase64),
    valid: !c.wantErr
  }))

  for (let size = 1; size <= REFERENCE_LEAVES.length; size++) {
    for (let index = 0; index < size; index++) {
      const good: InclusionCase = {
        name: `reference tree: leaf ${index} of ${size}`,
        origin: "reference tree",
        leaf_index: index,
        tree_size: size,
        leaf_hash: leafHashes[index]!,
        root_hash: roots[size]!,
        audit_path: (await tree.inclusionProof(index, size)).map(bytesToHex),
        valid: true
      }
      inclusion.push(good)
      if (!MUTATED_SIZES.includes(size)) continue
      const mutation = (what: string, changes: Partial<InclusionCase>) =>
        inclusion.push({ ...good, ...changes, name: `reference tree: leaf ${index} of ${size}, ${what}`, origin: "mutation", valid: false })
      good.audit_path.forEach((_, j) => {
        mutation(`bit ${j * 37 % 256} of path hash ${j} flipped`, { audit_path: good.audit_path.map((p, k) => (k === j ? flipBit(p, j * 37 % 256) : p)) })
        mutation(`path hash ${j} dropped`, { audit_path: good.audit_path.filter((_, k) => k !== j) })
      })
      mutation("a hash appended to the path", { audit_path: [...good.audit_path, leafHashes[0]!] })
      mutation("the leaf hash changed", { leaf_hash: flipBit(good.leaf_hash, 0) })
      mutation("the root of another size", { root_hash: roots[size - 1]! })
      mutation(`leaf index ${(index + 1) % size}`, { leaf_index: (index + 1) % size })
    }
  }

  for (let second = 1; second <= REFERENCE_LEAVES.length; second++) {
    for (let first = 1; first <= second; first++) {
      const good: ConsistencyCase = {
        name: `reference tree: ${first} -> ${second}`,
        origin: "reference tree",
        first,
        second,
        first_root: roots[first]!,
        second_root: roots[second]!,
        consistency_path: (await tree.consistencyProof(first, second)).map(bytesToHex),
        valid: true
      }
      consistency.push(good)
      if (!MUTATED_SIZES.includes(second) || first === second) continue
      const mutation = (what: string, changes: Partial<ConsistencyCase>) =>
        consistency.push({ ...good, ...changes, name: `reference tree: ${first} -> ${second}, ${what}`, origin: "mutation", valid: false })
      const path = good.consistency_path
      path.forEach((_, j) => {
        mutation(`bit ${j * 37 % 256} of path hash ${j} flipped`, { consistency_path: path.map((p, k) => (k === j ? flipBit(p, j * 37 % 256) : p)) })
        mutation(`path hash ${j} dropped`, { consistency_path: path.filter((_, k) => k !== j) })
        mutation(`path hash ${j} doubled`, { consistency_path: [...path.slice(0, j + 1), ...path.slice(j)] })
        if (j > 0) mutation(`path hashes ${j - 1} and ${j} swapped`, { consistency_path: path.map((p, k) => (k === j ? path[j - 1]! : k === j - 1 ? path[j]! : p)) })
      })
      mutation("a hash appended to the path", { consistency_path: [...path, leafHashes[0]!] })
      mutation("a hash prepended to the path", { consistency_path: [leafHashes[0]!, ...path] })
      mutation("roots swapped", { first_root: good.second_root, second_root: good.first_root })
      mutation("the first root of another size", { first_root: roots[first === 1 ? 2 : first - 1]! })
      mutation("the second root of another size", { second_root: roots[second - 1]! })
      mutation("first 0", { first: 0 })
      mutation("first greater than second", { first: second + 1 })
    }
  }

  for (const c of inclusion) {
    if ((await inclusionVerdict(c)) !== c.valid) throw new Error(`merkle-proofs.json: verifyInclusion disagrees with "${c.name}"`)
  }
  for (const c of consistency) {
    if ((await consistencyVerdict(c)) !== c.valid) throw new Error(`merkle-proofs.json: verifyConsistency disagrees with "${c.name}"`)
  }

  return {
    description:
      "RFC 9162 Merkle proofs on bare hashes (no signatures). `inclusion`: verify_inclusion(leaf_hash, leaf_index, tree_size, audit_path, root_hash) (section 2.1.3.2); `consistency`: verify_consistency(first, second, first_root, second_root, consistency_path) (section 2.1.4.2); each must answer `valid`. Hashes are hex (some imported cases hold hashes of the wrong length, or none: \"\"; they must be rejected, except that equal sizes with equal roots and an empty path are consistent whatever the roots). A consistency proof from tree size 0 is always rejected (it proves nothing), as upstream. Origins: the published test data of transparency-dev/merkle (`source`; verdicts are upstream's wantErr), the RFC 6962 reference tree of eight leaves (`reference_tree`; every proof), and mutations of its proofs for tree sizes 5, 7 and 8 (every one must be rejected). Sizes alone are not bound by the hashes (the proof of 1 -> 3 also passes as 1 -> 4 with the root of 3): signed tree heads bind them, see transparency.json.",
    version: 1,
    source: {
      repository: upstream.source,
      commit: upstream.commit,
      license: upstream.license,
      imported: { inclusion: upstream.inclusion.length, consistency: upstream.consistency.length }
    },
    reference_tree: {
      leaves: REFERENCE_LEAVES,
      leaf_hashes: leafHashes,
      roots: roots.map((root_hash, tree_size) => ({ tree_size, root_hash }))
    },
    inclusion,
    consistency
  }
}
