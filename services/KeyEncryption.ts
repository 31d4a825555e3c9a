import { Context, type Effect } from "effect"

/**
 * Envelope encryption of stored secrets (webhook signing secrets; BYOK credentials can reuse it) under the
 * gateway's key-encryption key. `context` is bound into the ciphertext (AES-GCM additional data), so a value
 * sealed for one row or purpose cannot be opened as another. Opening a tampered or foreign envelope dies:
 * it means the database or the KEK is wrong, which no request can fix.
 */
export class KeyEncryption extends Context.Service<KeyEncryption, {
  readonly seal: (plaintext: string, context: string) => Effect.Effect<string>
  readonly open: (envelope: string, context: string) => Effect.Effect<string>
}>()("privacy-relay/KeyEncryption") {}
