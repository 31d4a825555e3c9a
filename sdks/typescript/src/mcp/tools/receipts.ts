/**
 * Receipt tools: verify_receipt (offline, against the gateway's cached JWKS), get_receipt and list_receipts (the
 * receipts this client holds, and the gateway's stored v1 receipts when PORTAL_TOKEN_FILE is set),
 * receipt_chain_export and chain_verify (over the receipts held here), countersign_receipt and
 * transparency_inclusion (the gateway's proof, checked here against its signed tree head).
 */
import { z } from "zod"
import type { GatewayResponse } from "../../api.ts"
import { verifyChain, verifyInclusionProof, verifyReceipt } from "../../verify/index.ts"
import type { SessionContext, ToolDefinition } from "../context.ts"
import type { Receipt } from "../localReceipts.ts"
import { ok, pretty, ToolError } from "../toolResult.ts"

const receiptInput = z.union([z.string().min(1).max(200_000), z.looseObject({})])
const jti = z.string().regex(/^[0-9a-f]{32}$/, "32 lowercase hex characters")

const verification = z.looseObject({ valid: z.boolean(), reason: z.string().nullable(), checks: z.array(z.looseObject({})) })

const verifyReceiptTool: ToolDefinition<{ receipt: string | Record<string, unknown> }> = {
  name: "verify_receipt",
  title: "Verify a receipt offline",
  description:
    "Verifies a gateway receipt (v1, v2, failed, or a v3 countersignature) on this device against the gateway's published keys (fetched once and cached): schema, key, signature, chain link and time. Give the X-Service-Receipt-V2 header value, its JSON text, or the object. An invalid receipt is a result with valid=false and the failing check, not an error.",
  input: z.strictObject({ receipt: receiptInput.describe("The receipt: header value (base64), JSON text or object.") }),
  output: verification,
  run: async ({ receipt }, session) => {
    const result = await verifyReceipt(receipt as any, { jwks: session.shared.jwks() })
    return ok({ ...result }, result.valid ? "Receipt verified: signature, key, chain link and time all check." : `Receipt NOT valid: ${result.reason}`)
  }
}

const summary = (r: Receipt) => ({
  jti: r.jti ?? null,
  v: r.v ?? null,
  provider: r.provider ?? null,
  model: r.model ?? null,
  input_tokens: r.input_tokens ?? null,
  output_tokens: r.output_tokens ?? null,
  timestamp: r.timestamp ?? null,
  chain_id: r.chain?.chain_id ?? null,
  seq: r.chain?.seq ?? null
})

/** The same summary for a v1 receipt the gateway stored (its figures are in `claims`; `iat` is in seconds). */
const storedSummary = (r: GatewayResponse<"listReceipts">["receipts"][number]) => ({
  jti: r.jti,
  v: r.v,
  provider: r.claims.provider,
  model: r.claims.model,
  input_tokens: r.claims.tokens_in,
  output_tokens: r.claims.tokens_out,
  timestamp: new Date(r.iat * 1000).toISOString(),
  chain_id: r.chain.chain_id,
  seq: r.chain.seq
})

const getReceipt: ToolDefinition<{ jti: string }> = {
  name: "get_receipt",
  title: "Get a receipt",
  description:
    "Returns a receipt by its jti: the one this client received and keeps on the device, or, when the server has a portal token (PORTAL_TOKEN_FILE), the gateway's stored v1 receipt. Fails with `receipt_not_found` otherwise.",
  input: z.strictObject({ jti: jti.describe("The receipt's jti (32 hex).") }),
  output: z.looseObject({ source: z.enum(["local", "gateway"]), receipt: z.looseObject({}) }),
  run: async ({ jti }, session) => {
    const local = session.shared.receipts.byJti(jti)
    if (local !== undefined) return ok({ source: "local", receipt: local }, pretty(local))
    if (session.shared.settings.portalToken === undefined) {
      throw new ToolError("receipt_not_found", `No receipt ${jti} is kept on this device. Set PORTAL_TOKEN_FILE to also look in the gateway's stored receipts.`)
    }
    const stored = await (await session.shared.client()).rest.receipts.get(jti)
    return ok({ source: "gateway", receipt: stored }, pretty(stored))
  }
}

const listReceipts: ToolDefinition<{ source?: "local" | "gateway"; limit?: number }> = {
  name: "list_receipts",
  title: "List receipts",
  description:
    "Lists receipts, newest first: those this client received and keeps on the device (source 'local', the default), or the gateway's stored v1 receipts of the organisation (source 'gateway', needs PORTAL_TOKEN_FILE). Each entry has jti, model, tokens, time and chain position.",
  input: z.strictObject({
    source: z.enum(["local", "gateway"]).optional().describe("Default local."),
    limit: z.number().int().min(1).max(200).optional().describe("Default 50.")
  }),
  output: z.looseObject({ source: z.string(), receipts: z.array(z.looseObject({})) }),
  run: async ({ source = "local", limit = 50 }, session) => {
    if (source === "gateway") {
      const page = await (await session.shared.client()).rest.receipts.list({ limit })
      const receipts = page.receipts.map(storedSummary)
      return ok({ source, receipts, next_cursor: page.next_cursor }, receipts.map((r) => `${r.jti} ${r.model} ${r.input_tokens}+${r.output_tokens} tokens ${r.timestamp}`).join("\n") || "No receipts stored at the gateway.")
    }
    const receipts = [...session.shared.receipts.all()].reverse().slice(0, limit).map(summary)
    return ok({ source, receipts }, receipts.map((r) => `${r.jti} ${r.model} ${r.input_tokens}+${r.output_tokens} tokens ${r.timestamp}`).join("\n") || "No receipts kept on this device yet.")
  }
}

/** The receipts held here, per chain, in seq order. */
const chainsHeld = (session: SessionContext, chainId?: string): Map<string, Array<Receipt>> => {
  const chains = new Map<string, Array<Receipt>>()
  for (const r of session.shared.receipts.all()) {
    const id = r.chain?.chain_id
    if (typeof id !== "string" || (chainId !== undefined && id !== chainId)) continue
    chains.set(id, [...(chains.get(id) ?? []), r])
  }
  for (const list of chains.values()) list.sort((a, b) => a.chain.seq - b.chain.seq)
  return chains
}

const receiptChainExport: ToolDefinition<{ chain_id?: string }> = {
  name: "receipt_chain_export",
  title: "Export the receipt chain held here",
  description:
    "Exports the receipts this client holds, per chain, in chain order (seq), as JSON and as JSON Lines text, for an auditor or for chain_verify elsewhere; either form verifies offline with the SDKs' verifyChainExport / verify_chain_export (with allowGaps: other clients' receipts of the organisation fall between). Receipts hold hashes and token counts, never content.",
  input: z.strictObject({ chain_id: z.string().min(1).optional().describe("Only this chain (e.g. receipt-v2-org-...).") }),
  output: z.looseObject({ chains: z.array(z.looseObject({ chain_id: z.string(), count: z.number(), receipts: z.array(z.looseObject({})) })), jsonl: z.string() }),
  run: async ({ chain_id }, session) => {
    const chains = [...chainsHeld(session, chain_id)].map(([id, receipts]) => ({ chain_id: id, count: receipts.length, receipts }))
    if (chain_id !== undefined && chains.length === 0) throw new ToolError("chain_not_found", `No receipts of chain ${chain_id} are kept on this device.`)
    const jsonl = chains.flatMap((c) => c.receipts.map((r) => JSON.stringify(r))).join("\n")
    return ok({ chains, jsonl }, chains.map((c) => `${c.chain_id}: ${c.count} receipts`).join("\n") || "No receipts kept on this device yet.")
  }
}

/** Consecutive runs of seq: receipts of other clients of the organisation sit in the gaps, which are not breaks. */
const runsOf = (receipts: ReadonlyArray<Receipt>): Array<Array<Receipt>> => {
  const runs: Array<Array<Receipt>> = []
  for (const r of receipts) {
    const last = runs[runs.length - 1]
    if (last !== undefined && last[last.length - 1]!.chain.seq + 1 === r.chain.seq) last.push(r)
    else runs.push([r])
  }
  return runs
}

const chainVerify: ToolDefinition<{ receipts?: Array<string | Record<string, unknown>> }> = {
  name: "chain_verify",
  title: "Verify receipt chains",
  description:
    "Verifies receipt chains offline: every receipt's signature and each link (seq and prev_hash) to the receipt before it. Without `receipts`, checks every chain this client holds (receipts of other clients of the organisation fall between, so each run of consecutive seq is linked and checked). With `receipts`, checks that list as ONE chain in order, e.g. an export. Answers the first break with its position.",
  input: z.strictObject({ receipts: z.array(receiptInput).min(1).max(100_000).optional().describe("Receipts of one chain, in order.") }),
  output: z.looseObject({ valid: z.boolean(), chains: z.array(z.looseObject({ chain_id: z.string().nullable(), valid: z.boolean() })) }),
  run: async ({ receipts }, session) => {
    const jwks = session.shared.jwks()
    if (receipts !== undefined) {
      const result = await verifyChain(receipts as any, { jwks })
      const chain = { chain_id: result.chainId, valid: result.valid, verified: result.verified, first_seq: result.firstSeq, last_seq: result.lastSeq, break: result.break }
      return ok({ valid: result.valid, chains: [chain] }, result.valid ? `Chain ${result.chainId} verified: ${result.verified} receipts.` : `Chain broken at position ${result.break?.index} (${result.break?.kind}): ${result.break?.reason}`)
    }
    const chains = []
    for (const [id, held] of chainsHeld(session)) {
      let verified = 0
      let broken: unknown = null
      const runs = runsOf(held)
      for (const run of runs) {
        const result = await verifyChain(run as any, { jwks })
        verified += result.verified
        if (!result.valid) {
          broken = result.break
          break
        }
      }
      chains.push({ chain_id: id, valid: broken === null, verified, held: held.length, runs: runs.length, break: broken })
    }
    const valid = chains.every((c) => c.valid)
    return ok({ valid, chains }, chains.map((c) => `${c.chain_id}: ${c.valid ? "valid" : "BROKEN"} (${c.verified}/${c.held} verified, ${c.runs} runs)`).join("\n") || "No receipts kept on this device yet.")
  }
}

const sha256hex = z.string().regex(/^[0-9a-f]{64}$/, "64 lowercase hex characters")

const countersignReceipt: ToolDefinition<{ attestation: string | Record<string, unknown>; provider: string; model: string; hash_upstream_request: string; hash_upstream_response: string }> = {
  name: "countersign_receipt",
  title: "Have the gateway countersign an attestation",
  description:
    "Asks the gateway to countersign a v3 device attestation for a call (its provider, model and upstream request/response hashes) and verifies the countersignature offline. The witness is 'relayed' when the gateway relayed that exact call, 'asserted' otherwise.",
  input: z.strictObject({
    attestation: receiptInput.describe("The v3 attestation: X-Service-Attestation value or object."),
    provider: z.string().min(1),
    model: z.string().min(1),
    hash_upstream_request: sha256hex,
    hash_upstream_response: sha256hex
  }),
  output: z.looseObject({ countersignature: z.looseObject({}), verification }),
  run: async (args, session) => {
    const countersignature = await (await session.shared.client()).rest.receipts.countersign(args)
    const result = await verifyReceipt(countersignature, { jwks: session.shared.jwks(), attestation: args.attestation as any })
    return ok({ countersignature, verification: { ...result } }, `Countersigned (witness ${countersignature.witness ?? "?"}); ${result.valid ? "verified" : `NOT verified: ${result.reason}`}.`)
  }
}

const transparencyInclusion: ToolDefinition<{ jti: string }> = {
  name: "transparency_inclusion",
  title: "Prove a receipt is in the transparency log",
  description:
    "Fetches the transparency log's inclusion proof for a receipt (by jti) and its current signed tree head from the gateway, and checks on this device that the proof leads to the signed root. Fails with `not_found` when the log has no such receipt (yet).",
  input: z.strictObject({ jti: jti.describe("The receipt's jti (32 hex).") }),
  output: z.looseObject({ valid: z.boolean(), reason: z.string().nullable(), checks: z.array(z.looseObject({})), proof: z.looseObject({}), signed_tree_head: z.looseObject({}) }),
  run: async ({ jti }, session) => {
    const rest = (await session.shared.client()).rest
    const proof = await rest.receipts.inclusionProof(jti)
    const head = await rest.receipts.signedTreeHead()
    const result = await verifyInclusionProof(proof, head, { jwks: session.shared.jwks() })
    return ok({ ...result, proof, signed_tree_head: head }, result.valid ? `Receipt ${jti} is in the log (tree size ${head.tree_size ?? "?"}); proof verified.` : `Inclusion NOT proven: ${result.reason}`)
  }
}

export const receiptTools: ReadonlyArray<ToolDefinition> = [verifyReceiptTool, getReceipt, listReceipts, receiptChainExport, chainVerify, countersignReceipt, transparencyInclusion]
