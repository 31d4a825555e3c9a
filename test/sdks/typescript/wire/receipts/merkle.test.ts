import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { bytesToHex, hexToBytes } from "../../../../../sdks/typescript/src/wire/crypto/hex.ts"
import { emptyTreeRoot, MerkleTree, merkleLeafHash, merkleNodeHash, verifyInclusion } from "../../../../../sdks/typescript/src/wire/receipts/merkle.ts"

// The reference vectors of RFC 6962 / RFC 9162 implementations (certificate-transparency merkle_tree_test):
// eight leaves and the root of every prefix of them.
const LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"]
const ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"
]

const treeOf = async (leaves: ReadonlyArray<Uint8Array>) => {
  const tree = new MerkleTree()
  for (const leaf of leaves) await tree.append(await merkleLeafHash(leaf))
  return tree
}

/** MTH straight from the RFC's recursive definition, as an independent oracle. */
const referenceRoot = async (leaves: ReadonlyArray<Uint8Array>): Promise<Uint8Array> => {
  if (leaves.length === 0) return emptyTreeRoot()
  if (leaves.length === 1) return merkleLeafHash(leaves[0]!)
  let k = 1
  while (k * 2 < leaves.length) k *= 2
  return merkleNodeHash(await referenceRoot(leaves.slice(0, k)), await referenceRoot(leaves.slice(k)))
}

describe("Merkle tree (RFC 9162)", () => {
  it("matches the published root of every prefix of the reference leaves", async () => {
    const tree = new MerkleTree()
    for (const [i, leaf] of LEAVES.entries()) {
      await tree.append(await merkleLeafHash(hexToBytes(leaf)))
      expect(bytesToHex(await tree.rootHash())).toBe(ROOTS[i])
    }
    // older tree sizes stay answerable after later appends
    for (const [i, root] of ROOTS.entries()) expect(bytesToHex(await tree.rootHash(i + 1))).toBe(root)
  })

  it("has SHA-256 of nothing as the empty root", async () => {
    expect(bytesToHex(await new MerkleTree().rootHash())).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })

  it("every inclusion proof of every leaf in every tree size verifies, and agrees with the reference root", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 8 }), { minLength: 1, maxLength: 40 }), async (leaves) => {
        const tree = await treeOf(leaves)
        for (let size = 1; size <= leaves.length; size++) {
          const root = await tree.rootHash(size)
          expect(bytesToHex(root)).toBe(bytesToHex(await referenceRoot(leaves.slice(0, size))))
          for (let index = 0; index < size; index++) {
            const auditPath = await tree.inclusionProof(index, size)
            expect(await verifyInclusion({ leafHash: tree.leaf(index), index, treeSize: size, auditPath, rootHash: root })).toBe(true)
          }
        }
      }),
      { numRuns: 25 }
    )
  })

  it("rejects a proof with a tampered leaf, path element, index or root, or an index outside the tree", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 50 }), fc.nat(), fc.nat(), async (size, i, j) => {
        const tree = await treeOf(Array.from({ length: size }, (_, n) => new Uint8Array([n, n >> 8])))
        const index = i % size
        const rootHash = await tree.rootHash()
        const auditPath = await tree.inclusionProof(index)
        const leafHash = tree.leaf(index)
        const flip = (bytes: Uint8Array) => Uint8Array.from(bytes, (b, k) => (k === 0 ? b ^ 1 : b))
        expect(await verifyInclusion({ leafHash: flip(leafHash), index, treeSize: size, auditPath, rootHash })).toBe(false)
        expect(await verifyInclusion({ leafHash, index, treeSize: size, auditPath, rootHash: flip(rootHash) })).toBe(false)
        const k = j % auditPath.length
        const tampered = auditPath.map((p, n) => (n === k ? flip(p) : p))
        expect(await verifyInclusion({ leafHash, index, treeSize: size, auditPath: tampered, rootHash })).toBe(false)
        expect(await verifyInclusion({ leafHash, index: (index + 1) % size, treeSize: size, auditPath, rootHash })).toBe(false)
        // (tree_size alone is not bound by the path for every leaf; the signed tree head binds it)
        expect(await verifyInclusion({ leafHash, index, treeSize: index, auditPath, rootHash })).toBe(false)
        expect(await verifyInclusion({ leafHash, index, treeSize: size, auditPath: auditPath.slice(1), rootHash })).toBe(false)
      }),
      { numRuns: 40 }
    )
  })

  it("refuses proofs for leaves or sizes the tree does not have", async () => {
    const tree = await treeOf([new Uint8Array([1]), new Uint8Array([2])])
    await expect(tree.inclusionProof(2, 2)).rejects.toThrow(RangeError)
    await expect(tree.rootHash(3)).rejects.toThrow(RangeError)
  })
})
