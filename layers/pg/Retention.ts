import { Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { Retention, type RetentionReport } from "../../services/Retention.ts"
import { envelopeHashSync } from "../crypto/envelopeHashSync.ts"
import { appendAudit } from "./audit.ts"
import { jsonColumn } from "./jsonColumn.ts"

/** Rows removed per statement: each statement is its own short transaction, so a large first run never holds locks long. */
const BATCH = 2000
const DAY_MS = 86_400_000

const RECEIPT_TABLES = [
  { table: "receipts_v2", key: "receipts_v2" },
  { table: "receipts_v1", key: "receipts_v1" },
  { table: "receipts_failed", key: "receipts_failed" }
] as const


/** The instant before which rows go, `days` before `now`. */
export const retentionCutoff = (days: number, now: Date) => new Date(now.getTime() - days * DAY_MS)

export const RetentionPg = Layer.effect(
  Retention,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    // RETENTION_DAYS (unset = keep forever) and RETENTION_INTERVAL_MS (how often a node applies it; 0 = only by command).
    const settings = { days: config.settings.retentionDays, intervalMs: config.settings.retentionIntervalMs }

    /** Usage records go with the last of their two receipts (v2 and v1 share the jti), so the ledger check stays clean. */
    const dropUsageOf = (jtis: ReadonlyArray<string>) =>
      jtis.length === 0 ? Effect.succeed(0) : sql<{ id: string }>`
        DELETE FROM usage_records u WHERE ${sql.in("receipt_jti", jtis)}
          AND NOT EXISTS (SELECT 1 FROM receipts_v2 r WHERE r.jti = u.receipt_jti)
          AND NOT EXISTS (SELECT 1 FROM receipts_v1 r WHERE r.jti = u.receipt_jti)
        RETURNING u.id`.pipe(Effect.map((rows) => rows.length))

    /**
     * One chain: the newest receipt created before the cutoff becomes the chain's anchor (written first, so a run
     * stopped half-way leaves a chain that still verifies from its anchor), then it and everything before it go.
     */
    const dropChainPrefix = (table: string, chainId: string, orgId: string, upTo: string) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ envelope: unknown }>`
          SELECT envelope FROM ${sql(table)} WHERE chain_id = ${chainId} AND seq = ${upTo}::bigint`
        let anchored = false
        if (row !== undefined) {
          const envelope = jsonColumn<object>(row.envelope)
          const moved = yield* sql<{ chain_id: string }>`
            INSERT INTO receipt_chain_anchors (chain_id, org_id, seq, hash, envelope)
            VALUES (${chainId}, ${orgId}, ${upTo}::bigint, ${envelopeHashSync(envelope)}, ${JSON.stringify(envelope)}::jsonb)
            ON CONFLICT (chain_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, envelope = excluded.envelope, updated_at = now()
            WHERE receipt_chain_anchors.seq < excluded.seq
            RETURNING chain_id`
          anchored = moved.length > 0
        }
        let receipts = 0
        let usage = 0
        for (;;) {
          const gone = yield* sql<{ jti: string }>`
            DELETE FROM ${sql(table)} WHERE jti IN (
              SELECT jti FROM ${sql(table)} WHERE chain_id = ${chainId} AND seq <= ${upTo}::bigint ORDER BY seq LIMIT ${BATCH}
            ) RETURNING jti`
          receipts += gone.length
          if (table !== "receipts_failed") usage += yield* dropUsageOf(gone.map((g) => g.jti))
          if (gone.length < BATCH) break
        }
        return { anchored, receipts, usage }
      })

    /** Deletes by `statement` (which removes at most BATCH rows and answers them) until nothing is left. */
    const drain = (statement: () => Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      Effect.gen(function*() {
        let total = 0
        for (;;) {
          const gone = yield* statement()
          total += gone.length
          if (gone.length < BATCH) return total
        }
      })

    const apply = (cutoff: Date, actor: string) =>
      Effect.gen(function*() {
        const counts = { receipts_v2: 0, receipts_v1: 0, receipts_failed: 0, usage_records: 0, webhook_deliveries: 0, chains_anchored: 0 }
        for (const { table, key } of RECEIPT_TABLES) {
          const chains = yield* sql<{ chain_id: string; org_id: string; up_to: string }>`
            SELECT chain_id, min(org_id) AS org_id, max(seq)::text AS up_to FROM ${sql(table)}
            WHERE created_at < ${cutoff} GROUP BY chain_id ORDER BY chain_id`
          for (const chain of chains) {
            const dropped = yield* dropChainPrefix(table, chain.chain_id, chain.org_id, chain.up_to)
            counts[key] += dropped.receipts
            counts.usage_records += dropped.usage
            if (dropped.anchored) counts.chains_anchored++
          }
        }
        // Calls that never had a receipt (partial streams, demo keys) go by their own age.
        counts.usage_records += yield* drain(() =>
          sql`DELETE FROM usage_records WHERE id IN (
                SELECT id FROM usage_records WHERE receipt_jti IS NULL AND finished_at < ${cutoff} LIMIT ${BATCH}
              ) RETURNING id`
        )
        // Finished deliveries only (their attempts go with them); pending and retrying ones are still work.
        counts.webhook_deliveries += yield* drain(() =>
          sql`DELETE FROM webhook_deliveries WHERE id IN (
                SELECT id FROM webhook_deliveries WHERE status IN ('delivered', 'dead') AND created_at < ${cutoff} LIMIT ${BATCH}
              ) RETURNING id`
        )
        const report: RetentionReport = { cutoff: cutoff.toISOString(), ...counts }
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO retention_runs (cutoff, actor, counts) VALUES (${cutoff}, ${actor}, ${JSON.stringify(counts)}::jsonb)`
          yield* appendAudit(sql, { actor, action: "retention.applied", target: null, orgId: null, details: report })
        }))
        yield* Effect.logInfo("retention applied").pipe(Effect.annotateLogs({ ...report }))
        return report
      }).pipe(Effect.orDie, Effect.withSpan("Retention.apply"))

    if (settings.days !== undefined && settings.intervalMs > 0) {
      const days = settings.days
      // Every node runs it; runs are idempotent and anchors only move forward, so two at once cost work, not harm.
      yield* Effect.forkScoped(
        Effect.repeat(
          Effect.suspend(() => apply(retentionCutoff(days, new Date()), "retention-schedule")).pipe(
            Effect.catchCause((cause) => Effect.logWarning("retention run failed", cause))
          ),
          Schedule.spaced(Duration.millis(settings.intervalMs))
        ).pipe(Effect.delay(Duration.millis(Math.min(settings.intervalMs, 60_000))))
      )
    }

    return Retention.of({ days: settings.days, apply })
  })
)
