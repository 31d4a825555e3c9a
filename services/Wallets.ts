import { Context, Data, Effect } from "effect"

/** No wallet (so no organisation) has this id. */
export class OrganisationNotFound extends Data.TaggedError("OrganisationNotFound")<{ readonly orgId: string }> {}

export type LedgerKind = "debit" | "topup" | "trial_credit" | "licence_credit" | "adjustment" | "demo_credit"

/** USD balance per organisation in integer micro-USD, changed only together with an append-only ledger row. */
export class Wallets extends Context.Service<Wallets, {
  readonly balance: (orgId: string) => Effect.Effect<bigint, OrganisationNotFound>
  readonly credit: (input: { readonly orgId: string; readonly micros: bigint; readonly kind: LedgerKind; readonly reference?: string }) =>
    Effect.Effect<{ readonly balanceMicros: bigint }, OrganisationNotFound>
  /** Organisations whose ledger sum differs from their balance (the operator's `ledger check`). */
  readonly checkLedger: () => Effect.Effect<ReadonlyArray<{ readonly orgId: string; readonly balanceMicros: bigint; readonly ledgerMicros: bigint }>>
}>()("privacy-relay/Wallets") {}
