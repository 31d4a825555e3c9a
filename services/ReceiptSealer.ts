import { Context, type Effect } from "effect"
import type { ReceiptV1 } from "../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import type { FailedReceiptV2 } from "../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import type { ReceiptV2, RoutingDecisionV2, UpstreamTranslation } from "../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import type { RelayRoute } from "../src/relay/requestShape.ts"
import type { RenderAnswer, ResponseRecord, StoredResponse } from "./Idempotency.ts"

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
  readonly capability: RelayRoute
  readonly inputTokens: number
  readonly outputTokens: number
  readonly hashUpstreamRequest: string
  readonly hashUpstreamResponse: string
  readonly routingDecision?: RoutingDecisionV2
  /** Set when the body was translated to the provider's wire format (receipt `extensions.translation`). */
  readonly translation?: UpstreamTranslation
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

/** A usage_records row (docs/billing.md), less `receipt_jti`, which the sealer fills in. */
export interface UsageRow {
  readonly id: string
  readonly request_id: string
  readonly gateway_request_id: string
  readonly org_id: string
  readonly parent_org_id: string | null
  readonly key_id: string
  readonly provider: string
  readonly model: string
  readonly capability: string
  readonly key_mode: "pooled" | "byok"
  readonly input_tokens: number
  readonly output_tokens: number
  readonly estimated: boolean
  readonly partial: boolean
  readonly upstream_cost_micros: string
  readonly billed_micros: string
  readonly markup_micros: string
  readonly trace_id: string
  readonly started_at: string
}

/** The money side of one metered call, committed in the same statement as its receipts. */
export interface MeteredCall {
  /** The wallet hold taken at admission, released by this settlement. */
  readonly holdId: string
  readonly billedMicros: bigint
  readonly usage: UsageRow
  /** The debit ledger row's reference text. */
  readonly ledgerReference: string
  /** billing.low_balance threshold for wallets without their own. */
  readonly lowBalanceDefaultMicros: bigint
  /** The call carried an Idempotency-Key: its response is stored in the same statement. */
  readonly response?: ResponseRecord
  /**
   * Without `response`: the answer is rendered in the settlement all the same (not stored), so what it signs is
   * signed with the receipts' key while that key is current (never a retired one).
   */
  readonly render?: RenderAnswer
}

/**
 * The per-tenant sealing actor (docs/receipts.md, "Chains and sequence numbers").
 *
 * `seal` assigns `seq` in both chains (v2 `receipt-v2-org-<org>`, v1 `tenant-<account>`), signs both with ONE shared
 * jti, inserts both rows, queues the transparency leaf and records `receipt.signed` in the outbox. `settle` does the
 * same for a completed relay call (no receipts when `seal` is undefined: partial or accountless calls) and, in the
 * same atomic write, records its usage, debits the wallet, appends the ledger row and releases the hold, so none can
 * exist without the others. `sealFailed` seals a failed-call receipt in `failed-v2-org-<org>`. `hold` and `release`
 * reserve and return a call's maximum cost on the wallet, through the same actor, so a tenant's holds, releases and
 * settlements share its batches.
 *
 * Work for one organisation queues on one in-process actor, which writes whatever has queued up as one batch in one
 * statement; callers must not hold an open SQL transaction (the actor writes on its own fiber).
 */
export class ReceiptSealer extends Context.Service<ReceiptSealer, {
  readonly seal: (input: SealInput) => Effect.Effect<SealedReceipts>
  readonly settle: (
    input: { readonly orgId: string; readonly seal: SealInput | undefined; readonly metered: MeteredCall }
  ) => Effect.Effect<{
    readonly sealed: SealedReceipts | undefined
    /** What `metered.response` (stored) or `metered.render` rendered, when one was given. */
    readonly response: StoredResponse | undefined
  }>
  readonly sealFailed: (input: FailedSealInput) => Effect.Effect<FailedReceiptV2>
  /**
   * Reserves `amountMicros` on the wallet under hold `id` only while its available balance (balance minus holds) is
   * positive; false when it is not.
   */
  readonly hold: (input: { readonly orgId: string; readonly id: string; readonly amountMicros: bigint; readonly expiresAt: Date }) => Effect.Effect<boolean>
  /** Returns a hold's amount to its wallet (a hold already released or swept is a no-op). */
  readonly release: (input: { readonly orgId: string; readonly holdId: string }) => Effect.Effect<void>
}>()("privacy-relay/ReceiptSealer") {}
