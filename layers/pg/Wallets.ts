import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { OrganisationNotFound, Wallets } from "../../services/Wallets.ts"

export const WalletsPg = Layer.effect(
  Wallets,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const balance = (orgId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ b: string }>`SELECT balance_micros::text AS b FROM wallets WHERE org_id = ${orgId}`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new OrganisationNotFound({ orgId })
        return BigInt(rows[0].b)
      })
    return Wallets.of({
      balance,
      credit: ({ orgId, micros, kind, reference }) =>
        Effect.gen(function*() {
          const rows = yield* sql.withTransaction(Effect.gen(function*() {
            const updated = yield* sql<{ b: string }>`
              UPDATE wallets SET balance_micros = balance_micros + ${micros.toString()}::bigint
              WHERE org_id = ${orgId} RETURNING balance_micros::text AS b`
            if (updated.length === 0) return updated
            yield* sql`INSERT INTO ledger_entries ${
              sql.insert({ org_id: orgId, kind, amount_micros: micros.toString(), reference: reference ?? null })
            }`
            return updated
          })).pipe(Effect.orDie)
          if (rows.length === 0) return yield* new OrganisationNotFound({ orgId })
          return { balanceMicros: BigInt(rows[0].b) }
        }),
      checkLedger: () =>
        sql<{ org_id: string; b: string; l: string }>`
          SELECT w.org_id, w.balance_micros::text AS b, COALESCE(SUM(e.amount_micros), 0)::text AS l
          FROM wallets w LEFT JOIN ledger_entries e ON e.org_id = w.org_id
          GROUP BY w.org_id, w.balance_micros
          HAVING w.balance_micros <> COALESCE(SUM(e.amount_micros), 0)`.pipe(
          Effect.map((rows) => rows.map((r) => ({ orgId: r.org_id, balanceMicros: BigInt(r.b), ledgerMicros: BigInt(r.l) }))),
          Effect.orDie
        )
    })
  })
)
