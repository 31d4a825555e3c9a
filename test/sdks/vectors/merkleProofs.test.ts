import { describe, expect, it } from "vitest"
import { bytesToHex, hexToBytes } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { MerkleTree, merkleLeafHash, verifyConsistency, verifyInclusion } from "../../../sdks/typescript/src/wire/receipts/merkle.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const m = readVectors("merkle-proofs.json")

describe("merkle-proofs.json", () => {
  it("holds every case of the imported transparency-dev/merkle test data, and the reference tree's roots", async () => {
    expect(m.source.imported).toEqual({ inclusion: 98, consistency: 98 })
    expect(m.inclusion.filter((c: any) => c.origin.startsWith("transparency-dev/merkle "))).toHaveLength(98)
    expect(m.consistency.filter((c: any) => c.origin.startsWith("transparency-dev/merkle "))).toHaveLength(98)
    const tree = new MerkleTree()
    for (const [i, leaf] of m.reference_tree.leaves.entries()) {
      const hash = await merkleLeafHash(hexToBytes(leaf))
      expect(bytesToHex(hash)).toBe(m.reference_tree.leaf_hashes[i])
      await tree.append(hash)
    }
    for (const { tree_size, root_hash } of m.reference_tree.roots) expect(bytesToHex(await tree.rootHash(tree_size))).toBe(root_hash)
    // every mutation is a rejection
    expect([...m.inclusion, ...m.consistency].filter((c: any) => c.origin === "mutation" && c.valid)).toEqual([])
  })

  it.each(rows(m.inclusion))("inclusion: %s", async (_n, c: any) => {
    expect(await verifyInclusion({
      leafHash: hexToBytes(c.leaf_hash),
      index: c.leaf_index,
      treeSize: c.tree_size,
      auditPath: c.audit_path.map(hexToBytes),
      rootHash: hexToBytes(c.root_hash)
    })).toBe(c.valid)
  })

  it.each(rows(m.consistency))("consistency: %s", async (_n, c: any) => {
    expect(await verifyConsistency({
      first: c.first,
      second: c.second,
      firstRoot: hexToBytes(c.first_root),
      secondRoot: hexToBytes(c.second_root),
      proof: c.consistency_path.map(hexToBytes)
    })).toBe(c.valid)
  })
})
