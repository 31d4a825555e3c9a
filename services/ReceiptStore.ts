import { Context, type Effect } from "effect"
import type { ReceiptV1 } from "../sdks/typescript/src/wire/receipts/envelope-v1.ts"

export interface ReceiptListQuery {
  readonly limit: number
  /** Opaque cursor from a previous page's `next_cursor`. */
  readonly cursor?: string
  /** RFC 3339 bounds on the sealing time: from inclusive, to exclusive. */
  readonly from?: string
  readonly to?: string
  readonly model?: string
}

/** A completed, billed call that has no receipt (the operator's `ledger check`). */
export interface UnsealedUsage {
  readonly usageId: string
  readonly orgId: string
  readonly keyId: string
  readonly gatewayRequestId: string
  readonly billedMicros: bigint
  readonly finishedAt: string
}

/** A stored receipt that no usage record points at. */
export interface ReceiptWithoutUsage {
  readonly jti: string
  readonly orgId: string
  readonly chainId: string
  readonly seq: number
}

/** The two ways metering and sealing can disagree; each list is capped, the counts are not. */
export interface SealingAudit {
  readonly unsealedUsage: { readonly count: number; readonly sample: ReadonlyArray<UnsealedUsage> }
  readonly receiptsWithoutUsage: { readonly count: number; readonly sample: ReadonlyArray<ReceiptWithoutUsage> }
}

/** Reads of sealed receipts (the write side is ReceiptSealer). */
export class ReceiptStore extends Context.Service<ReceiptStore, {
  /** The stored v1 receipt with this jti, only when it belongs to the organisation. */
  readonly getV1: (orgId: string, jti: string) => Effect.Effect<ReceiptV1 | undefined>
  /** Newest first. `next_cursor` is null on the last page. Fails with "invalid_cursor" for a cursor we did not issue. */
  readonly listV1: (orgId: string, query: ReceiptListQuery) => Effect.Effect<
    { readonly receipts: ReadonlyArray<ReceiptV1>; readonly next_cursor: string | null },
    "invalid_cursor"
  >
  /**
   * What storage knows about position `seq` of a chain: `unknown` when the gateway holds no such chain (a receipt
   * from elsewhere), `dropped` when retention removed it (before the chain's anchor), `missing` when the chain
   * exists and has reached seq but that receipt is gone otherwise, else the envelope (the anchor's, for the last
   * dropped receipt, so the first one kept still shows its link).
   */
  readonly stored: (chainId: string, seq: number) => Effect.Effect<
    | { readonly _tag: "unknown" }
    | { readonly _tag: "missing" }
    | { readonly _tag: "dropped" }
    | { readonly _tag: "found"; readonly envelope: unknown }
  >
  /**
   * True when a receipt with this jti was sealed here (its transparency leaf stays) and is no longer stored because
   * retention removed it (it was sequenced before the last retention run finished, and no table holds it).
   */
  readonly expired: (jti: string) => Effect.Effect<boolean>
  /** The jti of a relayed call of the organisation with exactly these provider, model and upstream hashes. */
  readonly findRelayed: (orgId: string, call: {
    readonly provider: string
    readonly model: string
    readonly hashUpstreamRequest: string
    readonly hashUpstreamResponse: string
  }) => Effect.Effect<string | undefined>
  /**
   * Completed (not partial), billed usage records without a receipt, and v1/v2 receipts without a usage record: every
   * completed call is sealed in the same statement as its usage, so either list being non-empty is a defect.
   */
  readonly auditSealing: (sampleLimit: number) => Effect.Effect<SealingAudit>
}>()("privacy-relay/ReceiptStore") {}
