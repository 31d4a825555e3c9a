import type { FailedSealInput, SealedReceipts, SealInput, UsageRow } from "../../services/ReceiptSealer.ts"
import { newJti, rfc3339Millis, unixSeconds } from "../../sdks/typescript/src/wire/receipts/chain.ts"
import { envelopeHashSync } from "../crypto/envelopeHashSync.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { signReceiptV1Canonical } from "../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { type FailedReceiptV2, signFailedReceiptV2 } from "../../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import { signReceiptV2Canonical } from "../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import type { Signer } from "../../sdks/typescript/src/wire/receipts/signer.ts"
import type { StoredRow } from "./idempotencyRecords.ts"

/** A chain's last link: its seq and the hash of its last envelope. */
export interface ChainHead {
  readonly seq: number
  readonly hash: string
}

/**
 * One organisation's batch for `relay_settle` (migrations/0010_settle_batch.ts): the rows to insert, the holds it
 * releases and the wallet debit (the chain heads it expects and moves are kept by layers/pg/tenantBatch.ts).
 */
export interface SettleBatch {
  readonly orgId: string
  readonly receiptsV2: Array<{ jti: string; org_id: string; chain_id: string; seq: string; envelope: unknown }>
  readonly receiptsV1: Array<
    { jti: string; org_id: string; account_id: string; chain_id: string; seq: string; model: string; capability: string; envelope: unknown }
  >
  readonly receiptsFailed: Array<
    { jti: string; org_id: string; key_id: string; chain_id: string; seq: string; status: number; error_code: string; envelope: unknown }
  >
  readonly transparency: Array<{ jti: string; receipt_hash: string }>
  readonly usage: Array<UsageRow & { receipt_jti: string | null }>
  readonly ledger: Array<{ org_id: string; kind: "debit"; amount_micros: string; reference: string; usage_id: string }>
  readonly outbox: Array<{ id: string; org_id: string; event: string; data: unknown }>
  /** Holds released (their amounts return to the wallet). */
  readonly holds: Array<string>
  /** New holds, granted in order while the available balance is positive. */
  readonly holdRequests: Array<{ id: string; amount_micros: string; expires_at: string }>
  /** Idempotent calls' responses, stored by the same statement (not part of relay_settle's document). */
  readonly idempotency: Array<StoredRow>
  debit: bigint
  lowBalanceDefault: bigint
}

export const emptyBatch = (orgId: string): SettleBatch => ({
  orgId,
  receiptsV2: [],
  receiptsV1: [],
  receiptsFailed: [],
  transparency: [],
  usage: [],
  ledger: [],
  outbox: [],
  holds: [],
  holdRequests: [],
  idempotency: [],
  debit: 0n,
  lowBalanceDefault: 0n
})

/**
 * Signs a completed call's v2 and v1 receipts (one shared jti) on from the given heads and adds their rows, the
 * transparency leaf and the `receipt.signed` event to the batch. Answers the receipts and the chains' new heads.
 */
export const sealCompleted = async (
  batch: SettleBatch,
  at: {
    readonly iss: string
    readonly signer: Signer
    readonly input: SealInput
    readonly v2: { readonly chainId: string; readonly head: ChainHead }
    readonly v1: { readonly chainId: string; readonly head: ChainHead }
  }
) => {
  const { input, signer, iss } = at
  const jti = newJti()
  const now = new Date()
  const iat = unixSeconds(now)
  const r = input.routingDecision
  // Each receipt is canonicalised once: its signing input and its chain hash come from the same JCS members.
  const signedV2 = await signReceiptV2Canonical({
    iss,
    jti,
    iat,
    timestamp: rfc3339Millis(now),
    request_id: input.providerResponseId,
    provider: input.provider,
    model: input.model,
    ...(r === undefined ? {} : {
      routing_decision: {
        from: r.from,
        to: r.to,
        chosen_model: r.chosen_model,
        classifier: r.classifier,
        savings_pct: r.savings_pct,
        strategy: r.strategy,
        ...(r.key_slot === undefined ? {} : { key_slot: r.key_slot })
      }
    }),
    input_tokens: input.inputTokens,
    output_tokens: input.outputTokens,
    hash_upstream_request: input.hashUpstreamRequest,
    hash_upstream_response: input.hashUpstreamResponse,
    chain: { chain_id: at.v2.chainId, seq: at.v2.head.seq + 1, prev_hash: at.v2.head.hash },
    extensions: { request_id: input.requestId, ...(input.translation === undefined ? {} : { translation: input.translation }) }
  }, signer)
  const signedV1 = await signReceiptV1Canonical({
    iss,
    sub: input.keyPrefix,
    jti,
    iat,
    chain: { chain_id: at.v1.chainId, seq: at.v1.head.seq + 1, prev_hash: at.v1.head.hash },
    claims: {
      capability: input.capability,
      provider: input.provider,
      model: input.model,
      tokens_in: input.inputTokens,
      tokens_out: input.outputTokens,
      hash_upstream_request: input.hashUpstreamRequest,
      hash_upstream_response: input.hashUpstreamResponse,
      routing_decision: r === undefined
        ? null
        : { from: r.from, to: r.to, chosen_model: r.chosen_model, strategy: r.strategy, classifier: r.classifier },
      tokenisation_mode: "client",
      engine_version: input.engineVersion === "" ? null : input.engineVersion
    }
  }, signer)
  const v2 = signedV2.receipt
  const v1 = signedV1.receipt
  const v2Hash = sha256HexSync(signedV2.canonical)
  const v1Hash = sha256HexSync(signedV1.canonical)
  batch.receiptsV2.push({ jti, org_id: input.orgId, chain_id: at.v2.chainId, seq: String(v2.chain.seq), envelope: v2 })
  batch.receiptsV1.push({
    jti,
    org_id: input.orgId,
    account_id: input.accountId,
    chain_id: at.v1.chainId,
    seq: String(v1.chain.seq),
    model: input.model,
    capability: input.capability,
    envelope: v1
  })
  batch.transparency.push({ jti, receipt_hash: v2Hash })
  batch.outbox.push({
    id: crypto.randomUUID(),
    org_id: input.orgId,
    event: "receipt.signed",
    data: {
      jti,
      kid: signer.kid,
      chain_id: at.v2.chainId,
      seq: v2.chain.seq,
      v1_chain_id: at.v1.chainId,
      v1_seq: v1.chain.seq,
      provider: input.provider,
      model: input.model,
      capability: input.capability,
      input_tokens: input.inputTokens,
      output_tokens: input.outputTokens,
      request_id: input.requestId
    }
  })
  const sealed: SealedReceipts = { v2, v1, jti }
  return {
    sealed,
    v2Head: { seq: v2.chain.seq, hash: v2Hash } satisfies ChainHead,
    v1Head: { seq: v1.chain.seq, hash: v1Hash } satisfies ChainHead
  }
}

/** Signs a failed-call receipt on from the given head and adds its row and transparency leaf to the batch. */
export const sealFailed = async (
  batch: SettleBatch,
  at: { readonly iss: string; readonly signer: Signer; readonly input: FailedSealInput; readonly chainId: string; readonly head: ChainHead }
) => {
  const { input } = at
  const now = new Date()
  const receipt: FailedReceiptV2 = await signFailedReceiptV2({
    iss: at.iss,
    jti: newJti(),
    iat: unixSeconds(now),
    timestamp: rfc3339Millis(now),
    status: input.status,
    error_code: input.errorCode,
    request_id: null,
    provider: input.provider ?? null,
    model: input.model ?? null,
    hash_upstream_request: input.hashUpstreamRequest ?? null,
    hash_upstream_response: null,
    chain: { chain_id: at.chainId, seq: at.head.seq + 1, prev_hash: at.head.hash },
    extensions: { request_id: input.requestId }
  }, at.signer)
  const hash = envelopeHashSync(receipt)
  batch.receiptsFailed.push({
    jti: receipt.jti,
    org_id: input.orgId,
    key_id: input.keyId,
    chain_id: at.chainId,
    seq: String(receipt.chain.seq),
    status: input.status,
    error_code: input.errorCode,
    envelope: receipt
  })
  batch.transparency.push({ jti: receipt.jti, receipt_hash: hash })
  return { receipt, head: { seq: receipt.chain.seq, hash } satisfies ChainHead }
}
