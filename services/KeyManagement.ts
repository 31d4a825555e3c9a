import { Context, Data, Effect } from "effect"
import type { OrganisationNotFound } from "./Wallets.ts"

/** A gateway key as the portal shows it: never the key itself, never its hash. */
export interface KeyRecord {
  readonly id: string
  readonly orgId: string
  readonly keyPrefix: string
  readonly name: string | null
  readonly tier: string
  /** Scope allowlist; empty means fully permissive (the wire shows `[]`, never null). */
  readonly permissions: ReadonlyArray<string>
  readonly models: ReadonlyArray<string> | null
  readonly status: "active" | "revoked" | "rotated"
  /** Days after creation at which the scheduled rotation policy marks the key due; null = no policy. */
  readonly rotationDays: number | null
  /** Set by the rotation scheduler when the policy's period has elapsed; cleared by rotating. */
  readonly rotationDueAt: string | null
  /** The successor of a rotated key. */
  readonly replacedBy: string | null
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
}

/** A key just minted (create or rotate): the plain key is in this value only, once. */
export interface MintedKey {
  readonly record: KeyRecord
  readonly apiKey: string
}

/** Who performs a write, for the audit log: e.g. `portal-token:ptk_...` or `session:acct_...`. */
export interface Actor {
  readonly id: string
  /** The organisation the actor speaks for (keys of it and of its sub-organisations are reachable). */
  readonly orgId: string
}

export interface KeyChanges {
  readonly name?: string | null
  readonly permissions?: ReadonlyArray<string> | null
  readonly models?: ReadonlyArray<string> | null
  readonly rotationDays?: number | null
}

export interface AuditRow {
  readonly id: string
  readonly at: string
  readonly actor: string
  readonly action: string
  readonly target: string | null
  readonly orgId: string | null
  readonly details: unknown
}

/** No key has this id, or its organisation is out of the actor's reach (answered alike, so reach is not probed). */
export class KeyNotFound extends Data.TaggedError("KeyNotFound")<{ readonly keyId: string }> {}

/** Only active keys can be changed, rotated or revoked; `status` is the key's (revoked, rotated). */
export class KeyNotActive extends Data.TaggedError("KeyNotActive")<{ readonly status: string }> {}

/**
 * Key management for the portal (organisation-scoped; `ability:keys.read` / `ability:keys.write`). Inputs are
 * validated by the caller's route except cross-record rules (organisation reach), which live here.
 */
export class KeyManagement extends Context.Service<KeyManagement, {
  /** Mints a key in `orgId` (the actor's organisation or one of its sub-organisations); fires `key.created`. */
  readonly create: (actor: Actor, input: KeyChanges & { readonly orgId?: string }) => Effect.Effect<MintedKey, OrganisationNotFound>
  /** Keys of the actor's organisation (or the given sub-organisation), newest first. */
  readonly list: (actor: Actor, orgId?: string) => Effect.Effect<ReadonlyArray<KeyRecord>, OrganisationNotFound>
  readonly get: (actor: Actor, keyId: string) => Effect.Effect<KeyRecord, KeyNotFound>
  /** KeyNotActive for revoked or rotated keys. */
  readonly update: (actor: Actor, keyId: string, changes: KeyChanges) => Effect.Effect<KeyRecord, KeyNotFound | KeyNotActive>
  /** The old key is dead at once (status `rotated`); the successor inherits name, scopes, models and policy. */
  readonly rotate: (actor: Actor, keyId: string) => Effect.Effect<MintedKey, KeyNotFound | KeyNotActive>
  /** Fires `key.revoked`; the key then answers 401 `key_revoked`. */
  readonly revoke: (actor: Actor, keyId: string) => Effect.Effect<KeyRecord, KeyNotFound | KeyNotActive>
  /** Marks active keys whose rotation period has elapsed as due; returns how many were marked. */
  readonly markDueRotations: Effect.Effect<number>
  /** Audit rows, newest first (`before` = an id for paging). */
  readonly audit: (query: { readonly orgId?: string; readonly limit: number; readonly before?: string }) =>
    Effect.Effect<ReadonlyArray<AuditRow>>
}>()("privacy-relay/KeyManagement") {}
