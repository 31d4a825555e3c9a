import { Context, Data, type Effect } from "effect"
import type { Jwks, ReceiptJwk } from "../sdks/typescript/src/wire/receipts/jwks.ts"
import type { Signer } from "../sdks/typescript/src/wire/receipts/signer.ts"

/** Keys come from RECEIPT_SIGNING_KEY_FILE: rotating is replacing the file and restarting, not an API call. */
export class ReceiptKeyFromFile extends Data.TaggedError("ReceiptKeyFromFile")<{}> {}

/** The key new receipts are signed with. */
export interface CurrentReceiptKey {
  readonly kid: string
  readonly jwk: ReceiptJwk
  /** ES256 with the private key imported once and cached (a node:crypto KeyObject in ReceiptKeysPg). */
  readonly signer: Signer
}

/** Why a key became current. */
export type RotationTrigger = "initial" | "schedule" | "manual" | "file"

/** A rotation that happened: the `key.rotated` event's data (docs/webhooks.md). */
export interface ReceiptKeyRotation {
  readonly kid: string
  readonly previous_kid: string | null
  readonly trigger: "schedule" | "manual"
  /** The schedule period the key was made for ("2025-Q2"); null for an on-demand rotation. */
  readonly period: string | null
  /** RFC 3339, database clock. */
  readonly activated_at: string
}

/** One key as `cli.ts receipts keys list` shows it (never private material). */
export interface ReceiptKeyRecord {
  readonly kid: string
  readonly status: "current" | "retired"
  readonly trigger: RotationTrigger
  readonly source: "generated" | "file"
  readonly activated_at: string
  readonly retired_at: string | null
  readonly period: string | null
}

export interface ReceiptKeyStatus {
  /** RECEIPT_KEY_ROTATION: "quarterly", "monthly", "yearly", "off" or a fixed period such as "90d". */
  readonly schedule: string
  /** When the next scheduled rotation is due (RFC 3339); null when the schedule is off or keys come from a file. */
  readonly next_rotation_at: string | null
  /** Every key ever used, current first, then newest first. */
  readonly keys: ReadonlyArray<ReceiptKeyRecord>
}

/**
 * Receipt signing keys (P-256, kid = RFC 7638 thumbprint). Created on first start and stored with the private key
 * AES-256-GCM encrypted under the KEK, or loaded from RECEIPT_SIGNING_KEY_FILE. Every key ever used stays
 * published, so historic receipts verify indefinitely.
 *
 * Rotation (docs/receipts.md, "Signing keys"): on a schedule (RECEIPT_KEY_ROTATION, default quarterly) and on
 * demand. Any number of gateway processes may race at a boundary: one key is made per period. No receipt is ever
 * written signed by a key that is no longer current: settlements check the key under a lock rotations take
 * exclusively (migrations/0020_receipt_key_schedule.ts), and signatures made outside a settlement use `withCurrent`.
 * A retired key's private part is erased; its public part stays in the JWKS.
 */
export class ReceiptKeys extends Context.Service<ReceiptKeys, {
  /** The signing key as this process last saw it; no database round trip (cached, refreshed in the background). */
  readonly current: Effect.Effect<CurrentReceiptKey>
  /**
   * The current key as stored now (re-read; the cache follows). For a settlement refused because its key was
   * rotated meanwhile (another process rotated it).
   */
  readonly refresh: Effect.Effect<CurrentReceiptKey>
  /**
   * Runs `use` with the key that is current, holding the shared lock so no rotation retires it meanwhile: for
   * signatures that are not written by a settlement (signed tree heads, countersignatures of the countersign route).
   */
  readonly withCurrent: <A, E, R>(use: (key: CurrentReceiptKey) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Every published key, current first. */
  readonly jwks: Effect.Effect<Jwks>
  /** The verification key for a kid (current or retired); undefined when no such key was ever published. */
  readonly resolveKey: (kid: string) => Effect.Effect<CryptoKey | undefined>
  /**
   * A new current key now (on demand); the previous one is retired and stays published; `key.rotated` is recorded.
   * Fails ReceiptKeyFromFile when keys come from a file.
   */
  readonly rotate: Effect.Effect<ReceiptKeyRotation, ReceiptKeyFromFile>
  /**
   * The scheduled rotation: a new key when the current one became current before the schedule's current period
   * began (at most one per period across processes); undefined when none was due. Each process runs it at every
   * period boundary and every RECEIPT_KEY_ROTATION_CHECK_MS.
   */
  readonly rotateIfDue: Effect.Effect<ReceiptKeyRotation | undefined>
  readonly status: Effect.Effect<ReceiptKeyStatus>
}>()("privacy-relay/ReceiptKeys") {}
