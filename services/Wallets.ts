import { Context, Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"

export type LedgerKind = "debit" | "topup" | "trial_credit" | "licence_credit" | "adjustment" | "demo_credit"

/** USD balance per organisation in integer micro-USD, changed only together with an append-only ledger row. */
export class Wallets extends Context.Service<Wallets, {
  readonly balance: (orgId: string) => Effect.Effect<bigint, ApiError>
  readonly credit: (input: { readonly orgId: string; readonly micros: bigint; readonly kind: LedgerKind; readonly reference?: string }) =>
    Effect.Effect<{ readonly balanceMicros: bigint }, ApiError>
  /** Organisations whose ledger sum differs from their balance (the operator's `ledger check`). */
  readonly checkLedger: () => Effect.Effect<ReadonlyArray<{ readonly orgId: string; readonly balanceMicros: bigint; readonly ledgerMicros: bigint }>>
}>()("privacy-relay/Wallets") {}
