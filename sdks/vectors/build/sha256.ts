// sha256.json: the digests the wire format uses: plain SHA-256, the JCS body hash (egress_sha256 and
// hash_upstream_request), and the transparency log's domain-separated Merkle hashes.
import { bytesToHex, hexToBytes } from "../../typescript/src/wire/crypto/hex.ts"
import { jsonBodySha256Hex, sha256Hex } from "../../typescript/src/wire/crypto/jcs.ts"
import { emptyTreeRoot, merkleLeafHash, merkleNodeHash } from "../../typescript/src/wire/receipts/merkle.ts"

const utf8 = new TextEncoder()

export const buildSha256 = async () => {
  const bodies = [
    ["compact body", `{"model":"local-chat","messages":[{"role":"user","content":"Hi <PERSON_1_ab2c>"}]}`],
    ["same body, other member order and whitespace: same hash", `{ "messages" : [ { "content" : "Hi <PERSON_1_ab2c>", "role" : "user" } ],\n  "model" : "local-chat" }`],
    ["whitespace INSIDE a string changes the hash", `{"model":"local-chat","messages":[{"role":"user","content":"Hi  <PERSON_1_ab2c>"}]}`],
    ["numbers are hashed in their canonical form", `{"temperature":1.50,"max_tokens":1E2}`]
  ] as const
  const a = hexToBytes("11".repeat(32))
  const b = hexToBytes("22".repeat(32))
  return {
    description:
      "SHA-256 as lowercase hex. `text`: over the UTF-8 bytes of a string. `json_body`: the request-body hash (the attestation's egress_sha256, the receipts' hash_upstream_request) = SHA-256 of the JCS bytes of the parsed body, so member order and whitespace between tokens do not change it. `merkle`: the transparency log (RFC 9162): leaf = SHA-256(0x00 || data), node = SHA-256(0x01 || left || right), empty tree = SHA-256 of no bytes; inputs and outputs in hex.",
    version: 1,
    text: await Promise.all(
      ["", "abc", "Grüße, 世界", "Privacy Relay"].map(async (text) => ({ text, utf8_hex: bytesToHex(utf8.encode(text)), sha256: await sha256Hex(text) }))
    ),
    json_body: await Promise.all(
      bodies.map(async ([name, body]) => ({ name, body, sha256: await jsonBodySha256Hex(utf8.encode(body)) }))
    ),
    merkle: {
      empty_tree_root: bytesToHex(await emptyTreeRoot()),
      leaf: [{ data_hex: bytesToHex(a), leaf_hash: bytesToHex(await merkleLeafHash(a)) }],
      node: [{ left_hex: bytesToHex(a), right_hex: bytesToHex(b), node_hash: bytesToHex(await merkleNodeHash(a, b)) }]
    }
  }
}
