import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Outbox } from "../../services/Outbox.ts"
import type { LedgerKind } from "../../services/Wallets.ts"
import { formatUsd } from "../../src/billing/money.ts"

/**
 * Credits a wallet with its ledger row and records `billing.credit_added`, to be run INSIDE the caller's
 * transaction (so the credit, its ledger row and its event commit together, or not at all). Used by top-ups
 * and licence redemptions; returns undefined when the organisation has no wallet.
 */
export const creditInTransaction = (
  sql: SqlClient.SqlClient,
  outbox: Outbox["Service"],
  input: { readonly orgId: string; readonly micros: bigint; readonly kind: LedgerKind; readonly reference: string }
) =>
  Effect.gen(function*() {
    const amount = input.micros.toString()
    const updated = yield* sql<{ b: string }>`
      UPDATE wallets SET balance_micros = balance_micros + ${amount}::bigint
      WHERE org_id = ${input.orgId} RETURNING balance_micros::text AS b`
    if (updated.length === 0) return undefined
    yield* sql`INSERT INTO ledger_entries ${
      sql.insert({ org_id: input.orgId, kind: input.kind, amount_micros: amount, reference: input.reference })
    }`
    const balanceMicros = BigInt(updated[0].b)
    yield* outbox.record({
      orgId: input.orgId,
      event: "billing.credit_added",
      data: {
        kind: input.kind,
        amount_micros: Number(input.micros),
        amount_usd: formatUsd(input.micros),
        reference: input.reference,
        balance_micros: Number(balanceMicros)
      }
    })
    return { balanceMicros }
  })
