import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ReceiptStore } from "../../services/ReceiptStore.ts"
import { base64UrlDecode, base64UrlEncode } from "../../sdks/typescript/src/wire/crypto/base64.ts"
import type { ReceiptV1 } from "../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { isoOrNull } from "./audit.ts"
import { jsonColumn } from "./jsonColumn.ts"

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })

/** Keyset cursor: the (created_at, jti) of the last row of the page, as the database spells created_at. */
const encodeCursor = (createdAt: string, jti: string) => base64UrlEncode(utf8.encode(JSON.stringify([createdAt, jti])))
const decodeCursor = (cursor: string): readonly [string, string] | undefined => {
  try {
    const value: unknown = JSON.parse(utf8Decoder.decode(base64UrlDecode(cursor)))
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string") {
      // created_at as PostgreSQL prints timestamptz::text, e.g. 2025-01-02 03:04:05.123456+00
      if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2}){0,2}$/.test(value[0])) return undefined
      if (!/^[0-9a-f]{32}$/.test(value[1])) return undefined
      return [value[0], value[1]]
    }
  } catch {
    // fall through
  }
  return undefined
}

/** The table that holds each kind of chain, by chain id prefix. */
const tableOf = (chainId: string) =>
  chainId.startsWith("receipt-v2-org-")
    ? "receipts_v2"
    : chainId.startsWith("tenant-")
    ? "receipts_v1"
    : chainId.startsWith("failed-v2-org-")
    ? "receipts_failed"
    : undefined

export const ReceiptStorePg = Layer.effect(
  ReceiptStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return ReceiptStore.of({
      getV1: (orgId, jti) =>
        sql<{ envelope: ReceiptV1 }>`SELECT envelope FROM receipts_v1 WHERE jti = ${jti} AND org_id = ${orgId}`.pipe(
          Effect.map((rows) => rows[0]?.envelope),
          Effect.orDie
        ),
      listV1: (orgId, query) =>
        Effect.gen(function*() {
          let after: readonly [string, string] | undefined
          if (query.cursor !== undefined) {
            after = decodeCursor(query.cursor)
            if (after === undefined) return yield* Effect.fail("invalid_cursor" as const)
          }
          const conditions = [sql`org_id = ${orgId}`]
          if (after !== undefined) conditions.push(sql`(created_at, jti) < (${after[0]}::timestamptz, ${after[1]})`)
          if (query.from !== undefined) conditions.push(sql`created_at >= ${query.from}::timestamptz`)
          if (query.to !== undefined) conditions.push(sql`created_at < ${query.to}::timestamptz`)
          if (query.model !== undefined) conditions.push(sql`model = ${query.model}`)
          const rows = yield* sql<{ envelope: ReceiptV1; created_at: string; jti: string }>`
            SELECT envelope, created_at::text AS created_at, jti FROM receipts_v1
            WHERE ${sql.and(conditions)}
            ORDER BY created_at DESC, jti DESC
            LIMIT ${query.limit + 1}`.pipe(Effect.orDie)
          const page = rows.slice(0, query.limit)
          const last = page.at(-1)
          return {
            receipts: page.map((r) => r.envelope),
            next_cursor: rows.length > query.limit && last !== undefined ? encodeCursor(last.created_at, last.jti) : null
          }
        }),
      stored: (chainId, seq) =>
        Effect.gen(function*() {
          const table = tableOf(chainId)
          if (table === undefined) return { _tag: "unknown" as const }
          const heads = yield* sql<{ last_seq: string }>`
            SELECT last_seq::text AS last_seq FROM receipt_chains WHERE chain_id = ${chainId}`
          if (heads.length === 0) return { _tag: "unknown" as const }
          const rows = yield* sql<{ envelope: unknown }>`
            SELECT envelope FROM ${sql(table)} WHERE chain_id = ${chainId} AND seq = ${String(seq)}::bigint`
          if (rows.length > 0) return { _tag: "found" as const, envelope: rows[0]!.envelope }
          const anchors = yield* sql<{ seq_text: string; envelope: unknown }>`
            SELECT seq::text AS seq_text, envelope FROM receipt_chain_anchors WHERE chain_id = ${chainId}`
          const anchor = anchors[0]
          if (anchor !== undefined && BigInt(anchor.seq_text) === BigInt(seq)) return { _tag: "found" as const, envelope: jsonColumn(anchor.envelope) }
          if (anchor !== undefined && BigInt(anchor.seq_text) > BigInt(seq)) return { _tag: "dropped" as const }
          return BigInt(heads[0]!.last_seq) >= BigInt(seq) ? { _tag: "missing" as const } : { _tag: "unknown" as const }
        }).pipe(Effect.orDie),
      expired: (jti) =>
        sql<{ jti: string }>`
          SELECT l.jti FROM transparency_leaves l
          WHERE l.jti = ${jti}
            AND l.sequenced_at < (SELECT max(finished_at) FROM retention_runs)
            AND NOT EXISTS (SELECT 1 FROM receipts_v1 r WHERE r.jti = l.jti)
            AND NOT EXISTS (SELECT 1 FROM receipts_v2 r WHERE r.jti = l.jti)
            AND NOT EXISTS (SELECT 1 FROM receipts_failed r WHERE r.jti = l.jti)`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      findRelayed: (orgId, call) =>
        sql<{ jti: string }>`
          SELECT jti FROM receipts_v2
          WHERE org_id = ${orgId}
            AND envelope->>'hash_upstream_request' = ${call.hashUpstreamRequest}
            AND envelope->>'hash_upstream_response' = ${call.hashUpstreamResponse}
            AND envelope->>'provider' = ${call.provider}
            AND envelope->>'model' = ${call.model}
          ORDER BY created_at DESC LIMIT 1`.pipe(
          Effect.map((rows) => rows[0]?.jti),
          Effect.orDie
        ),

      auditSealing: (sampleLimit) =>
        Effect.gen(function*() {
          // Demo keys are metered but never sealed (they get no receipts by design), so they are not gaps.
          const unsealed = sql`
            FROM usage_records u LEFT JOIN api_keys k ON k.id = u.key_id
            WHERE u.receipt_jti IS NULL AND NOT u.partial AND k.tier IS DISTINCT FROM 'demo'`
          const orphans = sql`
            FROM (SELECT jti, org_id, chain_id, seq FROM receipts_v2
                  UNION ALL SELECT jti, org_id, chain_id, seq FROM receipts_v1) r
            WHERE NOT EXISTS (SELECT 1 FROM usage_records u WHERE u.receipt_jti = r.jti)`
          const [unsealedCount] = yield* sql<{ n: string }>`SELECT count(*)::text AS n ${unsealed}`
          const unsealedRows = yield* sql<{ id: string; org_id: string; key_id: string; gateway_request_id: string; billed: string; finished_at: unknown }>`
            SELECT u.id, u.org_id, u.key_id, u.gateway_request_id, u.billed_micros::text AS billed, u.finished_at
            ${unsealed} ORDER BY u.finished_at, u.id LIMIT ${sampleLimit}`
          const [orphanCount] = yield* sql<{ n: string }>`SELECT count(*)::text AS n ${orphans}`
          const orphanRows = yield* sql<{ jti: string; org_id: string; chain_id: string; seq: string | number }>`
            SELECT r.jti, r.org_id, r.chain_id, r.seq ${orphans} ORDER BY r.chain_id, r.seq LIMIT ${sampleLimit}`
          return {
            unsealedUsage: {
              count: Number(unsealedCount.n),
              sample: unsealedRows.map((r) => ({
                usageId: r.id,
                orgId: r.org_id,
                keyId: r.key_id,
                gatewayRequestId: r.gateway_request_id,
                billedMicros: BigInt(r.billed),
                finishedAt: isoOrNull(r.finished_at)!
              }))
            },
            receiptsWithoutUsage: {
              count: Number(orphanCount.n),
              sample: orphanRows.map((r) => ({ jti: r.jti, orgId: r.org_id, chainId: r.chain_id, seq: Number(r.seq) }))
            }
          }
        }).pipe(Effect.orDie)
    })
  })
)
