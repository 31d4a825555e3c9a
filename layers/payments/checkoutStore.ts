import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Outbox } from "../../services/Outbox.ts"
import type { Completion } from "../../services/Payments.ts"
import { creditInTransaction } from "../pg/creditWallet.ts"

export const newCheckoutId = () => `chk_${crypto.randomUUID().replaceAll("-", "")}`

/** Storage of checkout intents shared by the Stripe and development payment layers. */
export const makeCheckoutStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const outbox = yield* Outbox

  const insert = (row: { id: string; orgId: string; provider: "stripe" | "dev"; providerRef: string | null; amountMicros: bigint }) =>
    sql`INSERT INTO payments ${
      sql.insert({
        id: row.id,
        org_id: row.orgId,
        provider: row.provider,
        provider_ref: row.providerRef,
        amount_micros: row.amountMicros.toString()
      })
    }`.pipe(Effect.asVoid, Effect.orDie)

  const find = (id: string) =>
    sql<{ id: string; org_id: string; amount: string; status: string; provider: string }>`
      SELECT id, org_id, amount_micros::text AS amount, status, provider FROM payments WHERE id = ${id}`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  /**
   * Pending -> completed and the wallet credit, in one transaction. The conditional UPDATE lets exactly one
   * confirmation through (concurrent deliveries wait on the row lock, then see `completed`); the unique top-up
   * ledger reference backs it up.
   */
  const complete = (id: string, paymentRef: string) =>
    sql.withTransaction(Effect.gen(function*() {
      const rows = yield* sql<{ org_id: string; amount: string }>`
        UPDATE payments SET status = 'completed', payment_ref = ${paymentRef}, completed_at = now()
        WHERE id = ${id} AND status = 'pending'
        RETURNING org_id, amount_micros::text AS amount`
      if (rows.length === 0) return false
      yield* creditInTransaction(sql, outbox, {
        orgId: rows[0].org_id,
        micros: BigInt(rows[0].amount),
        kind: "topup",
        reference: `payment:${id}`
      })
      return true
    })).pipe(Effect.orDie)

  return { insert, find, complete }
})

export const completion = (credited: boolean, checkoutId: string, orgId: string): Completion => ({ credited, checkoutId, orgId })
