import { Context, Data, type Effect } from "effect"
import type { ConsistencyProof, InclusionProof, SignedTreeHead } from "../sdks/typescript/src/wire/receipts/transparency.ts"

/** The wire shapes live with their verifier (sdks/typescript/src/wire/receipts/transparency.ts). */
export type { ConsistencyProof, InclusionProof, SignedTreeHead }

/** A consistency proof was asked for between tree sizes the log cannot prove (not 1 <= first <= second <= treeSize). */
export class TreeSizeOutOfRange extends Data.TaggedError("TreeSizeOutOfRange")<{
  readonly first: number
  readonly second: number
  readonly treeSize: number
}> {}

/**
 * The append-only Merkle log of receipt hashes (v2 receipts and failed-call receipts, keyed by jti). Sealing
 * queues a leaf in the same transaction as the receipt; `sequence` gives queued leaves their dense indexes
 * (background, and on demand before every head or proof), so a receipt is in the log at most one sequencing
 * interval after it was sealed.
 */
export class TransparencyLog extends Context.Service<TransparencyLog, {
  /** Moves queued leaves into the log; returns the tree size. */
  readonly sequence: Effect.Effect<number>
  readonly treeHead: Effect.Effect<SignedTreeHead>
  /** undefined when no receipt with this id was sealed. */
  readonly inclusionProof: (receiptId: string) => Effect.Effect<InclusionProof | undefined>
  /**
   * RFC 9162 consistency proof from the tree of `first` leaves to the tree of `second` (default: the whole log now),
   * with the signed head of `second`. Fails TreeSizeOutOfRange unless 1 <= first <= second <= the log's size.
   */
  readonly consistencyProof: (first: number, second: number | undefined) => Effect.Effect<ConsistencyProof, TreeSizeOutOfRange>
}>()("privacy-relay/TransparencyLog") {}
