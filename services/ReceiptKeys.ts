import { Context, type Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"
import type { Jwks, ReceiptJwk } from "../sdks/typescript/src/wire/receipts/jwks.ts"
import type { Signer } from "../sdks/typescript/src/wire/receipts/signer.ts"

/** The key new receipts are signed with. */
export interface CurrentReceiptKey {
  readonly kid: string
  readonly jwk: ReceiptJwk
  /** ES256 with the private key imported once and cached (a node:crypto KeyObject in ReceiptKeysPg). */
  readonly signer: Signer
}

/**
 * Receipt signing keys (P-256, kid = RFC 7638 thumbprint). Created on first start and stored with the private key
 * AES-256-GCM encrypted under the KEK, or loaded from RECEIPT_SIGNING_KEY_FILE. Every key ever used stays
 * published, so historic receipts verify indefinitely.
 */
export class ReceiptKeys extends Context.Service<ReceiptKeys, {
  /** The signing key; no database round trip (cached, refreshed in the background). */
  readonly current: Effect.Effect<CurrentReceiptKey>
  /** Every published key, current first. */
  readonly jwks: Effect.Effect<Jwks>
  /** The verification key for a kid (current or retired); undefined when no such key was ever published. */
  readonly resolveKey: (kid: string) => Effect.Effect<CryptoKey | undefined>
  /** A new current key; the previous one stays published. 409 `receipt_key_from_file` when keys come from a file. */
  readonly rotate: Effect.Effect<{ readonly kid: string; readonly previous_kid: string | null }, ApiError>
}>()("privacy-relay/ReceiptKeys") {}
