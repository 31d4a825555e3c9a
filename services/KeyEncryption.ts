import { Context, type Effect } from "effect"
import type { AeadOpenError } from "../src/crypto/aead.ts"

/**
 * Envelope encryption of stored secrets (receipt signing keys, webhook secrets, BYOK credentials, the OpenID
 * provider's state) under the gateway's key-encryption key. `context` is bound into the ciphertext (AES-GCM
 * additional data), so a value sealed for one row or purpose cannot be opened as another.
 *
 * Values are always sealed under the current KEK (KEK_FILE); they open under it or, during a KEK rotation, under the
 * previous one (KEK_PREVIOUS_FILE; docs/deployment.md, "Rotating the KEK"). Opening a tampered or foreign envelope
 * dies in `open`: it means the database or the KEK is wrong, which no request can fix. `openTagged` is for the KEK
 * rotation, which must tell such values apart and name the key that opened the others.
 */
export class KeyEncryption extends Context.Service<KeyEncryption, {
  readonly seal: (plaintext: string, context: string) => Effect.Effect<string>
  readonly open: (envelope: string, context: string) => Effect.Effect<string>
  /** The plaintext and whether the current KEK opened it (false: the previous one); fails when neither does. */
  readonly openTagged: (
    envelope: string,
    context: string
  ) => Effect.Effect<{ readonly plaintext: string; readonly underCurrent: boolean }, AeadOpenError>
  /** The ids (one-way fingerprints, printable) of the current KEK and of the previous one when it is configured. */
  readonly kekIds: { readonly current: string; readonly previous: string | undefined }
}>()("privacy-relay/KeyEncryption") {}
