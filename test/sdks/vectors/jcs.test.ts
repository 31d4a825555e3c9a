import { describe, expect, it } from "vitest"
import { canonicalString, jsonBodySha256Hex, sha256Hex } from "../../../sdks/typescript/src/wire/crypto/jcs.ts"
import { bytesToHex, hexToBytes } from "../../../sdks/typescript/src/wire/crypto/hex.ts"
import { emptyTreeRoot, merkleLeafHash, merkleNodeHash } from "../../../sdks/typescript/src/wire/receipts/merkle.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const jcs = readVectors("jcs.json")
const sha = readVectors("sha256.json")

describe("jcs.json: sdks/typescript/src/wire/crypto/jcs.ts (gateway and SDK) canonicalises every case", () => {
  it.each(rows(jcs.cases))("%s", (_name, c) => {
    expect(canonicalString(JSON.parse(c.input))).toBe(c.canonical)
  })
})

describe("sha256.json", () => {
  it("plain SHA-256 of UTF-8 text", async () => {
    for (const c of sha.text) {
      expect(bytesToHex(new TextEncoder().encode(c.text))).toBe(c.utf8_hex)
      expect(await sha256Hex(c.text)).toBe(c.sha256)
    }
  })

  it("the JCS body hash (egress_sha256, hash_upstream_request)", async () => {
    for (const c of sha.json_body) expect(await jsonBodySha256Hex(new TextEncoder().encode(c.body)), c.name).toBe(c.sha256)
    expect(sha.json_body[0].sha256).toBe(sha.json_body[1].sha256)
    expect(sha.json_body[0].sha256).not.toBe(sha.json_body[2].sha256)
  })

  it("the transparency log's Merkle hashes", async () => {
    expect(bytesToHex(await emptyTreeRoot())).toBe(sha.merkle.empty_tree_root)
    for (const c of sha.merkle.leaf) expect(bytesToHex(await merkleLeafHash(hexToBytes(c.data_hex)))).toBe(c.leaf_hash)
    for (const c of sha.merkle.node) expect(bytesToHex(await merkleNodeHash(hexToBytes(c.left_hex), hexToBytes(c.right_hex)))).toBe(c.node_hash)
  })
})
