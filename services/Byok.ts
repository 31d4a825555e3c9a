import { Context, type Effect } from "effect"

/** What the portal may see of a stored credential: never the key itself, only its last four characters. */
export interface ByokCredentialInfo {
  readonly provider: string
  readonly last4: string
  readonly createdAt: Date
}

/**
 * Per-organisation provider credentials (bring your own key), encrypted at rest under the KEK with AES-256-GCM,
 * bound to `byok:<org>:<provider>` as additional data (docs/byok.md). Credentials belong to one organisation only:
 * a parent's credentials are not used for its sub-organisations.
 *
 * `credentialsOf` is on the relay hot path: each node caches an organisation's decrypted credentials (including
 * "none") for BYOK_CACHE_TTL_MS; `put`/`remove` invalidate this node's entry at once, other nodes within the TTL.
 */
export class Byok extends Context.Service<Byok, {
  /**
   * Stores (or replaces) the organisation's key for a catalogue provider. The caller validated both. `shown` is what
   * `last4` shows (default: the key's last four characters; an AWS key pair shows its access key id's).
   */
  readonly put: (orgId: string, provider: string, apiKey: string, shown?: string) => Effect.Effect<ByokCredentialInfo>
  readonly list: (orgId: string) => Effect.Effect<ReadonlyArray<ByokCredentialInfo>>
  /** False when there was no credential for this provider. */
  readonly remove: (orgId: string, provider: string) => Effect.Effect<boolean>
  /** Decrypted keys by provider slug, for routing. Never log or return these. */
  readonly credentialsOf: (orgId: string) => Effect.Effect<ReadonlyMap<string, string>>
}>()("privacy-relay/Byok") {}
