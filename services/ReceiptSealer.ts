import { Context, type Effect } from "effect"
import type { ReceiptV1 } from "../src/receipts/envelope-v1.ts"
import type { FailedReceiptV2 } from "../src/receipts/envelope-v2-failed.ts"
import type { ReceiptV2 } from "../src/receipts/envelope-v2.ts"

export interface SealInput {
  readonly orgId: string
  readonly accountId: string
  readonly keyId: string
  readonly keyPrefix: string
  /** X-Request-Id (extensions.request_id). */
  readonly requestId: string
  /** The provider's response id: the receipt `request_id`. */
  readonly providerResponseId: string
  readonly provider: string
  readonly model: string
  readonly capability: "chat.completions" | "messages" | "embeddings"
  readonly inputTokens: number
  readonly outputTokens: number
  readonly hashUpstreamRequest: string
  readonly hashUpstreamResponse: string
  readonly routingDecision?: {
    readonly from: string
    readonly to: string
    readonly chosen_model: string
    readonly classifier: string
    readonly savings_pct: number
    readonly strategy: string
  }
  /** From X-Service-Engine. */
  readonly engineVersion: string
}

export interface SealedReceipts {
  readonly v2: ReceiptV2
  readonly v1: ReceiptV1
  /** Shared by v2 and v1. */
  readonly jti: string
}

export interface FailedSealInput {
  readonly orgId: string
  readonly keyId: string
  readonly requestId: string
  readonly status: number
  readonly errorCode: string
  readonly provider?: string
  readonly model?: string
  readonly hashUpstreamRequest?: string
}

/**
 * Seals receipts into their chains (docs/receipts.md, "Chains and sequence numbers").
 *
 * `seal` assigns `seq` in both chains (v2 `receipt-v2-org-<org>`, v1 `tenant-<account>`), signs both with ONE shared
 * jti, inserts both rows, queues the transparency leaf and records `receipt.signed` in the outbox. It runs on the
 * ambient SqlClient: inside the caller's `sql.withTransaction` it becomes a savepoint of that transaction, so the
 * debit, usage and receipt commit or roll back together; outside one it opens its own transaction.
 *
 * `sealFailed` seals a failed-call receipt in `failed-v2-org-<org>` (same mechanics, its own transaction is fine).
 */
export class ReceiptSealer extends Context.Service<ReceiptSealer, {
  readonly seal: (input: SealInput) => Effect.Effect<SealedReceipts>
  readonly sealFailed: (input: FailedSealInput) => Effect.Effect<FailedReceiptV2>
}>()("privacy-relay/ReceiptSealer") {}
