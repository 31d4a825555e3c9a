import { Context, type Effect } from "effect"

export interface ChainVerdict {
  readonly chain_id: string
  readonly org_id: string
  /** Receipts checked (the chain length when intact). */
  readonly checked: number
  readonly ok: boolean
  /** First broken position and why, when not ok. */
  readonly seq: number | null
  readonly reason: string | null
}

/** When a verification pass finished and what it found. Kept in memory by each gateway process. */
export interface ChainPass {
  readonly finishedAt: string
  /** Walked every chain from seq 1 (otherwise continued from checkpoints). */
  readonly full: boolean
  readonly chains: number
  readonly broken: number
  readonly durationMs: number
}

/**
 * Re-verifies every stored receipt chain (signature with the published key, seq without gaps, prev_hash links, the
 * head matching the last receipt). A newly broken chain opens a `chain_incidents` row and records `chain.broken`;
 * an open incident whose chain verifies again is closed and records `chain.repaired`. A layer-scoped fiber runs
 * it every RECEIPT_CHAIN_VERIFY_MS; `verifyAll` runs it now.
 */
export class ChainVerifier extends Context.Service<ChainVerifier, {
  readonly verifyAll: Effect.Effect<ReadonlyArray<ChainVerdict>>
  /** This process's latest finished pass (background or `verifyAll`), or undefined before the first one. */
  readonly lastPass: Effect.Effect<ChainPass | undefined>
}>()("privacy-relay/ChainVerifier") {}
