import { Context, Data, type Effect } from "effect"
import type { Signer } from "../sdks/typescript/src/wire/receipts/signer.ts"

/** A stored 2xx response: replayed byte for byte (for streams, the whole wire transcript, trailer included). */
export interface StoredResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  readonly streamed: boolean
}

/** Renders a relay call's answer from its sealed receipt (undefined: none) with the key that signed it. */
export type RenderAnswer = (
  receipt: { readonly jti: string; readonly v2: unknown } | undefined,
  signer: Signer
) => Promise<StoredResponse>

/**
 * A relay call's response, stored in the same statement as its settlement (receipts, usage, debit, hold release):
 * the key's record exists exactly when the call was billed, so a crash between answering and storing can no longer
 * leave a billed call whose retry runs upstream and bills again.
 */
export interface ResponseRecord {
  readonly scope: string
  readonly key: string
  readonly bodyHash: string
  /**
   * The exact response the client gets, from the receipt the settlement sealed (undefined: the call has none) and
   * the key that signed it (for anything else the answer signs). Run by the sealing actor after signing, again
   * whenever it re-signs, so the stored response always carries the receipts that were committed.
   */
  readonly render: RenderAnswer
}

export type Admission =
  /**
   * First request with this key: run it, then `complete` (2xx only) or `abandon` (any failure). `complete` returns at
   * once and stores the response in the background, so the client does not wait for the write; the in-flight slot
   * stays held until the record is written, so a duplicate still waits and then replays. A shutdown waits for it.
   */
  | {
    readonly _tag: "Fresh"
    readonly complete: (response: StoredResponse) => Effect.Effect<void>
    /** Nothing to store (a failure), or the settlement already stored it (ResponseRecord): free the key's slot. */
    readonly abandon: Effect.Effect<void>
  }
  /** Same key, same body, within 24 h (possibly after waiting for the original): replay this. */
  | { readonly _tag: "Replay"; readonly response: StoredResponse }

/** The Idempotency-Key is empty, too long or not printable ASCII. */
export class InvalidIdempotencyKey extends Data.TaggedError("InvalidIdempotencyKey")<{}> {}

/** The Idempotency-Key was used with a different request body in the last 24 hours. */
export class IdempotencyKeyConflict extends Data.TaggedError("IdempotencyKeyConflict")<{}> {}

/** The original request with this Idempotency-Key is still running after the wait: the caller should retry shortly. */
export class IdempotencyInFlight extends Data.TaggedError("IdempotencyInFlight")<{}> {}

/**
 * Idempotency-Key handling (spec: Idempotency key state table). `admit` fails with `InvalidIdempotencyKey`,
 * `IdempotencyKeyConflict` (same key, different body), or `IdempotencyInFlight` when the original is still running
 * after the 3 s wait. Records live in PostgreSQL; the in-flight slot in Redis (or
 * in-process), plus a local wake-up so a duplicate on the same node does not poll.
 */
export class Idempotency extends Context.Service<Idempotency, {
  readonly admit: (input: { readonly scope: string; readonly key: string; readonly bodyHash: string }) =>
    Effect.Effect<Admission, InvalidIdempotencyKey | IdempotencyKeyConflict | IdempotencyInFlight>
  /**
   * Only the look-up, for a relay call, which takes the key's slot in its admission (AdmissionCounters): the stored
   * response to replay, `IdempotencyKeyConflict` for another body, or undefined (none stored yet).
   */
  readonly find: (input: { readonly scope: string; readonly key: string; readonly bodyHash: string }) =>
    Effect.Effect<StoredResponse | undefined, IdempotencyKeyConflict>
}>()("privacy-relay/Idempotency") {}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
export const IDEMPOTENCY_WAIT_MS = 3000
export const IDEMPOTENCY_KEY_MAX = 128

// Printable ASCII without spaces: what a UUID or any sane client key looks like.
const KEY_SHAPE = /^[\x21-\x7e]+$/

/** The error for a key that is empty, too long or not printable; undefined for a good one. */
export const invalidIdempotencyKey = (key: string): InvalidIdempotencyKey | undefined =>
  key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX || !KEY_SHAPE.test(key) ? new InvalidIdempotencyKey() : undefined

/** The in-flight slot of an idempotency key (Slots / AdmissionCounters). */
export const idempotencySlotKey = (scope: string, key: string) => `idem:${scope}:${key}`
