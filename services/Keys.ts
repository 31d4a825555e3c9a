import { Context, Data, type Effect } from "effect"
import type { AccountExists } from "./Accounts.ts"

/** Who a gateway key speaks for, resolved on every relay call. */
export interface GatewayPrincipal {
  readonly keyId: string
  readonly keyPrefix: string
  readonly orgId: string
  /** Set when the key belongs to a sub-organisation (partner mode). */
  readonly parentOrgId: string | null
  /** The account whose v1 chain `tenant-<account_id>` seals this key's calls; every key has one (migration 0014). */
  readonly accountId: string
  readonly tier: string
  /** Scope allowlist; null or empty means fully permissive. */
  readonly permissions: ReadonlyArray<string> | null
  /** Model allowlist; null or empty means every catalogue model. */
  readonly models: ReadonlyArray<string> | null
  /** Epoch milliseconds after which the key is refused (401 `key_expired`); null = never (only demo keys expire). */
  readonly expiresAt: number | null
}

/** An anonymous demo key (docs/demo.md): shown once, $2 of credit, expires, relay routes only, no receipts. */
export interface IssuedDemoKey {
  readonly apiKey: string
  readonly keyPrefix: string
  readonly orgId: string
  readonly balanceMicros: bigint
  readonly expiresAt: Date
}

export interface IssuedKey {
  readonly id: string
  /** The plain key: returned once, never stored. */
  readonly apiKey: string
  readonly keyPrefix: string
  readonly orgId: string
  readonly accountId: string
  readonly tier: string
  readonly name: string | null
  readonly permissions: ReadonlyArray<string> | null
}

/** The bearer is not a gateway key this gateway knows: missing, malformed or unknown (the three answer alike). */
export class InvalidKey extends Data.TaggedError("InvalidKey")<{}> {}

/** The gateway key has been revoked. */
export class KeyRevoked extends Data.TaggedError("KeyRevoked")<{}> {}

/** The gateway key is past its expiry (only demo keys expire, after 24 hours). */
export class KeyExpired extends Data.TaggedError("KeyExpired")<{}> {}

/** No gateway key has this prefix. */
export class KeyPrefixNotFound extends Data.TaggedError("KeyPrefixNotFound")<{ readonly keyPrefix: string }> {}

/** Several gateway keys share this prefix, so it names none of them. */
export class AmbiguousKeyPrefix extends Data.TaggedError("AmbiguousKeyPrefix")<{ readonly keyPrefix: string }> {}

export class Keys extends Context.Service<Keys, {
  /** Self-service: a new organisation, account (unverified when an e-mail is given), empty wallet and free key. */
  readonly issueSelfService: (input: { readonly email?: string; readonly name?: string }) => Effect.Effect<IssuedKey, AccountExists>
  /** A demo organisation, its anonymous account, a `demo` key expiring after 24 h and the $2 demo credit, at once. */
  readonly issueDemo: () => Effect.Effect<IssuedDemoKey>
  readonly authenticate: (bearer: string) => Effect.Effect<GatewayPrincipal, InvalidKey | KeyRevoked | KeyExpired>
  /** Revokes the key with this prefix; returns its id and organisation. */
  readonly revokeByPrefix: (keyPrefix: string, actor: string) =>
    Effect.Effect<{ readonly keyId: string; readonly orgId: string }, KeyPrefixNotFound | AmbiguousKeyPrefix>
  readonly orgOfPrefix: (keyPrefix: string) => Effect.Effect<string, KeyPrefixNotFound>
}>()("privacy-relay/Keys") {}
