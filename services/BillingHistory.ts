import { Context, Effect } from "effect"

export interface LedgerEntry {
  readonly id: string
  readonly kind: string
  readonly amountMicros: bigint
  readonly reference: string | null
  readonly usageId: string | null
  readonly createdAt: string
}

export interface UsageRecord {
  readonly id: string
  readonly requestId: string
  readonly keyId: string
  readonly provider: string
  readonly model: string
  readonly capability: string
  readonly keyMode: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly billedMicros: bigint
  readonly upstreamCostMicros: bigint
  readonly markupMicros: bigint
  readonly estimated: boolean
  readonly partial: boolean
  readonly receiptJti: string | null
  readonly finishedAt: string
}

export interface UsageDay {
  readonly day: string
  readonly provider: string
  readonly model: string
  readonly calls: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly billedMicros: bigint
}

/** Refused calls of one day with one error code: the failed-call receipts sealed for them. */
export interface FailureDay {
  readonly day: string
  readonly status: number
  readonly errorCode: string
  readonly calls: number
}

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

/** Reads of an organisation's ledger and usage, and of its sub-organisations (partner mode). */
export class BillingHistory extends Context.Service<BillingHistory, {
  /** Newest first; `cursor` is the `nextCursor` of the previous page. */
  readonly ledger: (orgId: string, page: { readonly limit: number; readonly cursor?: string }) => Effect.Effect<Page<LedgerEntry>>
  readonly usage: (orgId: string, page: { readonly limit: number; readonly cursor?: string }) => Effect.Effect<Page<UsageRecord>>
  /** Totals per UTC day, provider and model in [from, to). */
  readonly usageByDay: (orgId: string, range: { readonly from: Date; readonly to: Date }) => Effect.Effect<ReadonlyArray<UsageDay>>
  /** Calls refused after their key was accepted (each has a failed-call receipt), per UTC day and error code, in [from, to). */
  readonly failuresByDay: (orgId: string, range: { readonly from: Date; readonly to: Date }) => Effect.Effect<ReadonlyArray<FailureDay>>
  readonly subOrganisations: (parentId: string) =>
    Effect.Effect<ReadonlyArray<{ readonly orgId: string; readonly name: string; readonly balanceMicros: bigint; readonly createdAt: string }>>
  /** True when `orgId` is a direct sub-organisation of `parentId`. */
  readonly isSubOrganisation: (parentId: string, orgId: string) => Effect.Effect<boolean>
}>()("privacy-relay/BillingHistory") {}
