// Receipts that stay verifiable for years (docs/receipts.md): keep each receipt's full envelope, the gateway's JWKS
// and a signed tree head of its transparency log; later, with nothing but those, verify each receipt and the chain,
// prove each receipt is in the log, and prove the log only grew since the head you kept.
//   GATEWAY_URL=http://127.0.0.1:8080 GATEWAY_KEY_FILE=.secrets/gateway-key node examples/receipts.ts
import { RelayClient, verifyChainExport, verifyConsistencyProof, verifyInclusionProof, verifyReceipt } from "@privacy-relay/sdk"

const gatewayUrl = process.env.GATEWAY_URL!
const client = new RelayClient({ gatewayUrl, apiKeyFile: process.env.GATEWAY_KEY_FILE! })

// 1. What to store: every receipt whole (a bare jti cannot be verified), the JWKS, and a signed tree head.
const archive: Array<Record<string, unknown>> = []
for (const question of ["What is a Merkle tree?", "And a consistency proof?", "Why keep a tree head?"]) {
  const answer = await client.chat.completions.create({ model: process.env.MODEL ?? "local-chat", messages: [{ role: "user", content: question }] })
  archive.push(answer.receipt as Record<string, unknown>)
}
const jwks = await (await fetch(`${gatewayUrl}/api/.well-known/service-receipt-pubkeys.jwks`)).json()
const keptHead = await client.rest.receipts.signedTreeHead()

// 2. Later, offline: each receipt with the stored JWKS (every key the gateway ever used stays in it).
for (const receipt of archive) {
  const result = await verifyReceipt(receipt, { jwks })
  console.log(`receipt ${String(receipt.jti).slice(0, 8)} seq ${(receipt.chain as { seq: number }).seq} verified: ${result.valid}`)
}
// The chain: seq without gaps, each prev_hash the hash of the receipt before (a gap, a reordering or a substituted
// receipt is named in `break.kind`).
const chain = await verifyChainExport(archive, { jwks })
console.log(`chain verified: ${chain.valid} (${chain.chains[0]!.verified} receipts)`)

// 3. Online again: each receipt is in the transparency log, and the log only grew since the head kept above.
for (const receipt of archive) {
  const proof = await client.rest.receipts.inclusionProof(receipt.jti as string)
  console.log(`in the transparency log: ${(await verifyInclusionProof(proof, null, { jwks, receipt })).valid}`)
}
await client.chat.completions.create({ model: process.env.MODEL ?? "local-chat", messages: [{ role: "user", content: "One more." }] })
const consistency = await client.rest.receipts.consistencyProof(keptHead.tree_size)
const grown = await verifyConsistencyProof(consistency, keptHead, { jwks })
console.log(`log consistent since the kept head (${keptHead.tree_size} -> ${consistency.second} leaves): ${grown.valid}`)
