import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AccountExists } from "../../services/Accounts.ts"
import {
  AmbiguousKeyPrefix,
  type GatewayPrincipal,
  InvalidKey,
  KeyExpired,
  KeyPrefixNotFound,
  KeyRevoked,
  Keys
} from "../../services/Keys.ts"
import { Outbox } from "../../services/Outbox.ts"
import { DEMO_CREDIT_MICROS, DEMO_KEY_LIFETIME_MS, DEMO_TIER } from "../../src/keys/demo.ts"
import { isWellFormedGatewayKey, keyPrefixOf, newGatewayKey } from "../../src/keys/format.ts"
import { BoundedLru } from "../../src/cache/boundedLru.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { isoOrNull } from "./audit.ts"
import { creditInTransaction } from "./creditWallet.ts"
import { KeyCache } from "./KeyCache.ts"
import { insertOrganisation } from "./Organisations.ts"
import { isUniqueViolation } from "./sqlErrors.ts"

interface KeyRow {
  readonly id: string
  readonly key_prefix: string
  readonly org_id: string
  readonly parent_id: string | null
  readonly account_id: string
  readonly tier: string
  readonly status: string
  readonly permissions: ReadonlyArray<string> | null
  readonly models: ReadonlyArray<string> | null
  readonly expires_at: unknown
}

/** Checked on every call, cached or not: an expiry is a property of the key, not an event anyone announces. */
const refuseExpired = (principal: GatewayPrincipal, now: number) =>
  principal.expiresAt !== null && principal.expiresAt <= now ? Effect.fail(new KeyExpired()) : Effect.succeed(principal)

/** `last_used_at` is refreshed at most once a minute per key, off the request path. */
const TOUCH_INTERVAL_MS = 60_000

/** Keys whose last touch is remembered (one number each). */
const TOUCHED_KEYS_BOUND = 50_000

export const KeysPg = Layer.effect(
  Keys,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const keyCache = yield* KeyCache
    // When each key last wrote last_used_at. Bounded: a key pushed out only writes its next use a little early.
    const lastTouched = new BoundedLru<string, number>(TOUCHED_KEYS_BOUND)

    const touch = (keyId: string, now: number) => {
      const last = lastTouched.get(keyId) ?? 0
      if (now - last < TOUCH_INTERVAL_MS) return Effect.void
      lastTouched.set(keyId, now)
      return sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${keyId}`.pipe(Effect.ignore, Effect.forkDetach, Effect.asVoid)
    }

    const authenticate = (bearer: string) =>
      Effect.gen(function*() {
        if (!isWellFormedGatewayKey(bearer)) return yield* new InvalidKey()
        const hash = sha256HexSync(bearer)
        const now = yield* Clock.currentTimeMillis
        const cached = keyCache.principals.get(hash)
        if (cached !== undefined) {
          yield* refuseExpired(cached, now)
          yield* touch(cached.keyId, now)
          return cached
        }
        // Read before the query: an eviction while it is in flight makes `store` drop the possibly stale row.
        const generation = keyCache.principals.generation()
        const rows = yield* sql<KeyRow>`
          SELECT k.id, k.key_prefix, k.org_id, o.parent_id, k.account_id, k.tier, k.status, k.permissions, k.models, k.expires_at
          FROM api_keys k JOIN organisations o ON o.id = k.org_id
          WHERE k.key_hash = ${hash}`.pipe(Effect.orDie)
        const row = rows[0]
        // Unknown and non-active keys are not cached: a new key works at once, and refusals stay exact.
        if (row === undefined) return yield* new InvalidKey()
        if (row.status !== "active") return yield* new KeyRevoked()
        yield* touch(row.id, now)
        const principal: GatewayPrincipal = {
          keyId: row.id,
          keyPrefix: row.key_prefix,
          orgId: row.org_id,
          parentOrgId: row.parent_id,
          accountId: row.account_id,
          tier: row.tier,
          permissions: row.permissions,
          models: row.models,
          expiresAt: row.expires_at === null ? null : new Date(isoOrNull(row.expires_at)!).getTime()
        }
        keyCache.principals.store(hash, principal, generation)
        return yield* refuseExpired(principal, now)
      })

    /** A new organisation with its first account and key, inside the caller's transaction (self-service, demo). */
    const insertOrgAccountAndKey = (input: {
      readonly orgName: string
      readonly email: string | null
      readonly accountId: string
      readonly keyId: string
      readonly apiKey: string
      readonly tier: string
      readonly keyName: string | null
      readonly expiresAt: Date | null
      readonly actor: string
    }) =>
      Effect.gen(function*() {
        const orgId = yield* insertOrganisation(sql, { name: input.orgName })
        yield* sql`INSERT INTO accounts ${sql.insert({ id: input.accountId, org_id: orgId, email: input.email, email_verified: false })}`
        yield* sql`INSERT INTO api_keys ${
          sql.insert({
            id: input.keyId,
            org_id: orgId,
            account_id: input.accountId,
            key_hash: sha256HexSync(input.apiKey),
            key_prefix: keyPrefixOf(input.apiKey),
            tier: input.tier,
            name: input.keyName,
            permissions: null,
            models: null,
            expires_at: input.expiresAt === null ? null : input.expiresAt.toISOString()
          })
        }`
        yield* sql`INSERT INTO audit_log ${
          sql.insert({ actor: input.actor, action: "key.created", target: input.keyId, details: JSON.stringify({ org_id: orgId, tier: input.tier }) })
        }`
        return orgId
      })

    const issueSelfService = (input: { email?: string; name?: string }) =>
      Effect.gen(function*() {
        const apiKey = newGatewayKey()
        const keyId = `key_${crypto.randomUUID().replaceAll("-", "")}`
        const accountId = `acct_${crypto.randomUUID().replaceAll("-", "")}`
        const insert = Effect.gen(function*() {
          if (input.email !== undefined) {
            const existing = yield* sql`SELECT 1 FROM accounts WHERE lower(email) = lower(${input.email})`
            if (existing.length > 0) return yield* new AccountExists()
          }
          const orgId = yield* insertOrgAccountAndKey({
            orgName: input.name ?? input.email ?? "self-service",
            email: input.email ?? null,
            accountId,
            keyId,
            apiKey,
            tier: "free",
            keyName: input.name ?? null,
            expiresAt: null,
            actor: "self-service"
          })
          if (input.email !== undefined) {
            yield* outbox.record({ orgId, event: "user.created", data: { account_id: accountId, org_id: orgId, source: "self-service" } })
          }
          yield* outbox.record({
            orgId,
            event: "key.created",
            data: { key_id: keyId, key_prefix: keyPrefixOf(apiKey), tier: "free", source: "self-service" }
          })
          return orgId
        })
        const orgId = yield* sql.withTransaction(insert).pipe(
          Effect.catchTag("SqlError", (e) => isUniqueViolation(e) ? new AccountExists() : Effect.die(e))
        )
        return {
          id: keyId,
          apiKey,
          keyPrefix: keyPrefixOf(apiKey),
          orgId,
          accountId,
          tier: "free",
          name: input.name ?? null,
          permissions: null
        }
      })

    const findByPrefix = (keyPrefix: string) =>
      sql<{ id: string; org_id: string }>`SELECT id, org_id FROM api_keys WHERE key_prefix = ${keyPrefix} ORDER BY created_at DESC`
        .pipe(Effect.orDie)

    const issueDemo = () =>
      Effect.gen(function*() {
        const apiKey = newGatewayKey()
        const keyId = `key_${crypto.randomUUID().replaceAll("-", "")}`
        const accountId = `acct_${crypto.randomUUID().replaceAll("-", "")}`
        const expiresAt = new Date(Date.now() + DEMO_KEY_LIFETIME_MS)
        const { orgId, balanceMicros } = yield* sql.withTransaction(Effect.gen(function*() {
          // An anonymous account row, like an anonymous self-service key's: nobody signs in with it.
          const orgId = yield* insertOrgAccountAndKey({
            orgName: "demo",
            email: null,
            accountId,
            keyId,
            apiKey,
            tier: DEMO_TIER,
            keyName: "demo",
            expiresAt,
            actor: "demo"
          })
          const credited = yield* creditInTransaction(sql, outbox, { orgId, micros: DEMO_CREDIT_MICROS, kind: "demo_credit", reference: `demo:${keyId}` })
          return { orgId, balanceMicros: credited!.balanceMicros }
        })).pipe(Effect.orDie)
        return { apiKey, keyPrefix: keyPrefixOf(apiKey), orgId, balanceMicros, expiresAt }
      })

    return Keys.of({
      authenticate,
      issueSelfService,
      issueDemo,
      orgOfPrefix: (keyPrefix) =>
        Effect.flatMap(findByPrefix(keyPrefix), (rows) =>
          rows.length === 0
            ? Effect.fail(new KeyPrefixNotFound({ keyPrefix }))
            : Effect.succeed(rows[0].org_id)),
      revokeByPrefix: (keyPrefix, actor) =>
        Effect.gen(function*() {
          const rows = yield* findByPrefix(keyPrefix)
          if (rows.length === 0) return yield* new KeyPrefixNotFound({ keyPrefix })
          if (rows.length > 1) {
            return yield* new AmbiguousKeyPrefix({ keyPrefix })
          }
          const { id, org_id } = rows[0]
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE id = ${id}`
            yield* sql`INSERT INTO audit_log ${sql.insert({ actor, action: "key.revoked", target: id, details: null })}`
            yield* outbox.record({ orgId: org_id, event: "key.revoked", data: { key_id: id, key_prefix: keyPrefix } })
          })).pipe(Effect.ensuring(keyCache.evict(id)), Effect.orDie)
          return { keyId: id, orgId: org_id }
        })
    })
  })
)
