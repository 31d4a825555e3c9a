import { Context, type Effect } from "effect"

/** RFC 9162-style signed tree head. `sig` covers the JCS bytes without `sig`, with the receipt key `kid`. */
export interface SignedTreeHead {
  readonly v: "transparency-sth-v1"
  readonly alg: "ES256"
  readonly kid: string
  /** The log's identity: the gateway's PUBLIC_BASE_URL. */
  readonly iss: string
  readonly tree_size: number
  /** Hex. */
  readonly root_hash: string
  /** RFC 3339 with milliseconds. */
  readonly timestamp: string
  readonly sig: string
}

export interface InclusionProof {
  /** The receipt jti (the log calls it receipt_id). */
  readonly receipt_id: string
  readonly leaf_index: number
  readonly tree_size: number
  /** envelopeHash of the logged receipt (hex). */
  readonly receipt_hash: string
  /** SHA-256(0x00 || receipt_hash bytes), hex. */
  readonly leaf_hash: string
  /** RFC 9162 audit path, hex, leaf to root. */
  readonly audit_path: ReadonlyArray<string>
  /** The signed head of the tree the proof is for. */
  readonly sth: SignedTreeHead
}

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
}>()("privacy-relay/TransparencyLog") {}
