import { Context, type Effect } from "effect"

/** What one retention run removed (rows), and the cutoff it applied. */
export interface RetentionReport {
  /** RFC 3339: rows created before this instant were removed. */
  readonly cutoff: string
  readonly receipts_v2: number
  readonly receipts_v1: number
  readonly receipts_failed: number
  readonly usage_records: number
  readonly webhook_deliveries: number
  /** Chains whose anchor (last dropped receipt) moved in this run. */
  readonly chains_anchored: number
}

/**
 * Drops receipts, usage records and finished webhook deliveries older than the retention period, keeping every
 * remaining receipt chain verifiable from an anchor (docs/deployment.md, "Retention"). Transparency leaves (hashes
 * only) are kept, so the log's tree and its proofs stay what they were.
 */
export class Retention extends Context.Service<Retention, {
  /** RETENTION_DAYS, or undefined when nothing is ever dropped. */
  readonly days: number | undefined
  /** Drops everything created before `cutoff`; idempotent; recorded in retention_runs and the audit log. */
  readonly apply: (cutoff: Date, actor: string) => Effect.Effect<RetentionReport>
}>()("privacy-relay/Retention") {}
