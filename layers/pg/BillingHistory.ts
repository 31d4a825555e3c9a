import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BillingHistory, type UsageRecord } from "../../services/BillingHistory.ts"

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString())

/** Usage pages are ordered by (finished_at, id); the cursor carries both, as `<timestamptz text>|<id>`. */
const encodeCursor = (at: string, id: string) => Buffer.from(`${at}|${id}`).toString("base64url")
const decodeCursor = (cursor: string) => {
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  const bar = text.lastIndexOf("|")
  return bar < 0 ? undefined : { at: text.slice(0, bar), id: text.slice(bar + 1) }
}

export const BillingHistoryPg = Layer.effect(
  BillingHistory,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return BillingHistory.of({
      ledger: (orgId, { limit, cursor }) =>
        Effect.gen(function*() {
          const before = cursor !== undefined && /^\d{1,19}$/.test(cursor) ? cursor : undefined
          const rows = yield* sql<{ id: string; kind: string; amount: string; reference: string | null; usage_id: string | null; created_at: unknown }>`
            SELECT id::text AS id, kind, amount_micros::text AS amount, reference, usage_id, created_at FROM ledger_entries
            WHERE org_id = ${orgId} ${before === undefined ? sql`` : sql`AND id < ${before}::bigint`}
            ORDER BY id DESC LIMIT ${limit + 1}`
          const items = rows.slice(0, limit).map((r) => ({
            id: r.id,
            kind: r.kind,
            amountMicros: BigInt(r.amount),
            reference: r.reference,
            usageId: r.usage_id,
            createdAt: iso(r.created_at)
          }))
          return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null }
        }).pipe(Effect.orDie),
      usage: (orgId, { limit, cursor }) =>
        Effect.gen(function*() {
          const after = cursor === undefined ? undefined : decodeCursor(cursor)
          const rows = yield* sql<Record<string, unknown>>`
            SELECT id, request_id, key_id, provider, model, capability, key_mode, input_tokens, output_tokens, estimated, partial,
              receipt_jti, billed_micros::text AS billed, upstream_cost_micros::text AS upstream, markup_micros::text AS markup,
              finished_at, finished_at::text AS finished_text
            FROM usage_records
            WHERE org_id = ${orgId} ${
            after === undefined ? sql`` : sql`AND (finished_at, id) < (${after.at}::timestamptz, ${after.id})`
          }
            ORDER BY finished_at DESC, id DESC LIMIT ${limit + 1}`
          const page = rows.slice(0, limit)
          const items: Array<UsageRecord> = page.map((r) => ({
            id: String(r.id),
            requestId: String(r.request_id),
            keyId: String(r.key_id),
            provider: String(r.provider),
            model: String(r.model),
            capability: String(r.capability),
            keyMode: String(r.key_mode),
            inputTokens: Number(r.input_tokens),
            outputTokens: Number(r.output_tokens),
            billedMicros: BigInt(String(r.billed)),
            upstreamCostMicros: BigInt(String(r.upstream)),
            markupMicros: BigInt(String(r.markup)),
            estimated: Boolean(r.estimated),
            partial: Boolean(r.partial),
            receiptJti: r.receipt_jti === null ? null : String(r.receipt_jti),
            finishedAt: iso(r.finished_at)
          }))
          const last = page[page.length - 1]
          return { items, nextCursor: rows.length > limit ? encodeCursor(String(last.finished_text), String(last.id)) : null }
        }).pipe(Effect.orDie),
      failuresByDay: (orgId, { from, to }) =>
        sql<{ day: string; status: number; error_code: string; calls: string }>`
          SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, status, error_code, count(*)::text AS calls
          FROM receipts_failed WHERE org_id = ${orgId} AND created_at >= ${from} AND created_at < ${to}
          GROUP BY 1, 2, 3 ORDER BY 1 DESC, 2, 3`.pipe(
          Effect.map((rows) => rows.map((r) => ({ day: r.day, status: Number(r.status), errorCode: r.error_code, calls: Number(r.calls) }))),
          Effect.orDie
        ),
      usageByDay: (orgId, { from, to }) =>
        sql<{ day: string; provider: string; model: string; calls: string; input: string; output: string; billed: string }>`
          SELECT to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, provider, model, count(*)::text AS calls,
            COALESCE(SUM(input_tokens), 0)::text AS input, COALESCE(SUM(output_tokens), 0)::text AS output,
            COALESCE(SUM(billed_micros), 0)::text AS billed
          FROM usage_records WHERE org_id = ${orgId} AND finished_at >= ${from} AND finished_at < ${to}
          GROUP BY 1, 2, 3 ORDER BY 1 DESC, 2, 3`.pipe(
          Effect.map((rows) =>
            rows.map((r) => ({
              day: r.day,
              provider: r.provider,
              model: r.model,
              calls: Number(r.calls),
              inputTokens: Number(r.input),
              outputTokens: Number(r.output),
              billedMicros: BigInt(r.billed)
            }))
          ),
          Effect.orDie
        ),
      subOrganisations: (parentId) =>
        sql<{ id: string; name: string; b: string; created_at: unknown }>`
          SELECT o.id, o.name, COALESCE(w.balance_micros, 0)::text AS b, o.created_at
          FROM organisations o LEFT JOIN wallets w ON w.org_id = o.id
          WHERE o.parent_id = ${parentId} ORDER BY o.created_at, o.id`.pipe(
          Effect.map((rows) => rows.map((r) => ({ orgId: r.id, name: r.name, balanceMicros: BigInt(r.b), createdAt: iso(r.created_at) }))),
          Effect.orDie
        ),
      isSubOrganisation: (parentId, orgId) =>
        sql`SELECT 1 FROM organisations WHERE id = ${orgId} AND parent_id = ${parentId}`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
    })
  })
)
