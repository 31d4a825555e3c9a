import fc from "fast-check"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bytesToHex, hexToBytes } from "../../../../../sdks/typescript/src/wire/crypto/hex.ts"
import { emptyTreeRoot, MerkleTree, merkleLeafHash, merkleNodeHash, verifyConsistency, verifyInclusion } from "../../../../../sdks/typescript/src/wire/receipts/merkle.ts"

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

/** RFC 9162 section 2.1.4.1 SUBPROOF straight from the definition (no cached subtrees), as an independent oracle. */
const referenceConsistency = async (m: number, leaves: ReadonlyArray<Uint8Array>, whole = true): Promise<Array<string>> => {
  const n = leaves.length
  if (m === n) return whole ? [] : [bytesToHex(await referenceRoot(leaves))]
  let k = 1
  while (k * 2 < n) k *= 2
  return m <= k
    ? [...(await referenceConsistency(m, leaves.slice(0, k), whole)), bytesToHex(await referenceRoot(leaves.slice(k)))]
    : [...(await referenceConsistency(m - k, leaves.slice(k), false)), bytesToHex(await referenceRoot(leaves.slice(0, k)))]
}

const b64 = (s: string | null) => (s === null ? new Uint8Array(0) : new Uint8Array(Buffer.from(s, "base64")))
const TRANSPARENCY_DEV = JSON.parse(readFileSync(join(import.meta.dirname, "../../../../../sdks/vectors/build/transparency-dev-merkle.json"), "utf8"))

describe("consistency proofs (RFC 9162 section 2.1.4)", () => {
  it("every proof between every pair of sizes verifies and is the RFC's SUBPROOF, for random trees", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 6 }), { minLength: 1, maxLength: 24 }), async (leaves) => {
        const tree = await treeOf(leaves)
        for (let second = 1; second <= leaves.length; second++) {
          const secondRoot = await tree.rootHash(second)
          for (let first = 1; first <= second; first++) {
            const proof = await tree.consistencyProof(first, second)
            expect(proof.map(bytesToHex)).toEqual(await referenceConsistency(first, leaves.slice(0, second)))
            expect(await verifyConsistency({ first, second, firstRoot: await tree.rootHash(first), secondRoot, proof })).toBe(true)
          }
        }
      }),
      { numRuns: 15 }
    )
  })

  it("agrees with every case of the transparency-dev/merkle test data, and reproduces its proofs of the reference tree", async () => {
    const tree = await treeOf(LEAVES.map(hexToBytes))
    for (const c of TRANSPARENCY_DEV.consistency) {
      const input = { first: c.size1, second: c.size2, firstRoot: b64(c.root1), secondRoot: b64(c.root2), proof: (c.proof ?? []).map(b64) }
      expect(await verifyConsistency(input), c.file).toBe(!c.wantErr)
      if (!c.wantErr && c.size2 <= LEAVES.length && c.size1 >= 1) {
        expect((await tree.consistencyProof(c.size1, c.size2)).map(bytesToHex), c.file).toEqual(input.proof.map(bytesToHex))
      }
    }
    for (const c of TRANSPARENCY_DEV.inclusion) {
      const input = { leafHash: b64(c.leafHash), index: c.leafIdx, treeSize: c.treeSize, auditPath: (c.proof ?? []).map(b64), rootHash: b64(c.root) }
      expect(await verifyInclusion(input), c.file).toBe(!c.wantErr)
      if (!c.wantErr && c.treeSize <= LEAVES.length && bytesToHex(input.rootHash) === ROOTS[c.treeSize - 1]) {
        expect((await tree.inclusionProof(c.leafIdx, c.treeSize)).map(bytesToHex), c.file).toEqual(input.auditPath.map(bytesToHex))
      }
    }
    expect(TRANSPARENCY_DEV.consistency.length + TRANSPARENCY_DEV.inclusion.length).toBe(196)
  })

  it("rejects every mutation: a changed, dropped, added or swapped hash, swapped or other roots, impossible sizes", async () => {
    const SIZE = 20
    const tree = await treeOf(Array.from({ length: SIZE }, (_, n) => new Uint8Array([n, 7])))
    const roots = await Promise.all(Array.from({ length: SIZE + 1 }, (_, n) => tree.rootHash(n)))
    let mutations = 0
    for (let second = 2; second <= SIZE; second++) {
      for (let first = 1; first < second; first++) {
        const proof = await tree.consistencyProof(first, second)
        const good = { first, second, firstRoot: roots[first]!, secondRoot: roots[second]!, proof }
        const flip = (bytes: Uint8Array, bit: number) => Uint8Array.from(bytes, (b, k) => (k === (bit >> 3) % 32 ? b ^ (1 << (bit & 7)) : b))
        const variants: Array<[string, typeof good]> = []
        proof.forEach((_, j) => {
          for (const bit of [0, 77, 255]) variants.push([`bit ${bit} of hash ${j}`, { ...good, proof: proof.map((p, k) => (k === j ? flip(p, bit) : p)) }])
          variants.push([`hash ${j} dropped`, { ...good, proof: proof.filter((_, k) => k !== j) }])
          variants.push([`hash ${j} doubled`, { ...good, proof: [...proof.slice(0, j + 1), ...proof.slice(j)] }])
          if (j > 0) variants.push([`hashes ${j - 1} and ${j} swapped`, { ...good, proof: proof.map((p, k) => (k === j ? proof[j - 1]! : k === j - 1 ? proof[j]! : p)) }])
        })
        variants.push(["a hash appended", { ...good, proof: [...proof, roots[1]!] }])
        variants.push(["a hash prepended", { ...good, proof: [roots[1]!, ...proof] }])
        variants.push(["the first root", { ...good, proof: [roots[first]!, ...proof] }])
        variants.push(["roots swapped", { ...good, firstRoot: roots[second]!, secondRoot: roots[first]! }])
        variants.push(["first root of another size", { ...good, firstRoot: roots[first === 1 ? 2 : first - 1]! }])
        variants.push(["second root of another size", { ...good, secondRoot: roots[second === SIZE ? second - 1 : second + 1]! }])
        // (A size alone is not bound by the hashes: the proof of 1 -> 3 also "proves" 1 -> 4 with the root of 3. The
        // signed tree heads bind the sizes: verifyConsistencyProof compares them with the proof's.)
        variants.push(["first 0", { ...good, first: 0 }])
        variants.push(["first > second", { ...good, first: second + 1 }])
        expect(await verifyConsistency(good)).toBe(true)
        for (const [name, variant] of variants) {
          mutations++
          expect(await verifyConsistency(variant), `${first} -> ${second}: ${name}`).toBe(false)
        }
      }
    }
    expect(mutations).toBeGreaterThan(3000)
  })

  it("refuses to prove from the empty tree or to a size the tree does not have", async () => {
    const tree = await treeOf([new Uint8Array([1]), new Uint8Array([2])])
    await expect(tree.consistencyProof(0, 2)).rejects.toThrow(RangeError)
    await expect(tree.consistencyProof(2, 1)).rejects.toThrow(RangeError)
    await expect(tree.consistencyProof(1, 3)).rejects.toThrow(RangeError)
    expect(await tree.consistencyProof(2, 2)).toEqual([])
  })
})
