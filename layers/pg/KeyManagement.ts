import { Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { type Actor, type AuditRow, type KeyChanges, KeyManagement, KeyNotActive, KeyNotFound, type KeyRecord, type MintedKey } from "../../services/KeyManagement.ts"
import { OrganisationNotFound } from "../../services/Wallets.ts"
import { Outbox } from "../../services/Outbox.ts"
import { keyPrefixOf, newGatewayKey } from "../../src/keys/format.ts"
import { appendAudit, isoOrNull } from "./audit.ts"
import { sha256HexSync } from "../crypto/nodeSha256.ts"
import { KeyCache } from "./KeyCache.ts"
import { receiptAccountOf } from "./receiptAccount.ts"

interface Row {
  readonly id: string
  readonly org_id: string
  readonly account_id: string
  readonly key_prefix: string
  readonly name: string | null
  readonly tier: string
  readonly permissions: ReadonlyArray<string> | null
  readonly models: ReadonlyArray<string> | null
  readonly status: KeyRecord["status"]
  readonly rotation_days: number | null
  readonly rotation_due_at: unknown
  readonly replaced_by: string | null
  readonly created_at: unknown
  readonly last_used_at: unknown
  readonly revoked_at: unknown
}

const toRecord = (r: Row): KeyRecord => ({
  id: r.id,
  orgId: r.org_id,
  keyPrefix: r.key_prefix,
  name: r.name,
  tier: r.tier,
  permissions: r.permissions ?? [],
  models: r.models,
  status: r.status,
  rotationDays: r.rotation_days === null ? null : Number(r.rotation_days),
  rotationDueAt: isoOrNull(r.rotation_due_at),
  replacedBy: r.replaced_by,
  createdAt: isoOrNull(r.created_at)!,
  lastUsedAt: isoOrNull(r.last_used_at),
  revokedAt: isoOrNull(r.revoked_at)
})

// A key of an organisation out of reach answers exactly like a key that does not exist.

/** Portal-created keys start on the free tier; paid tiers are the billing capability's business. */
const PORTAL_KEY_TIER = "free"
const newKeyId = () => `key_${crypto.randomUUID().replaceAll("-", "")}`
const json = (v: ReadonlyArray<string> | null | undefined) => (v === null || v === undefined ? null : JSON.stringify(v))

export const KeyManagementPg = Layer.effect(
  KeyManagement,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const config = yield* AppConfig
    const keyCache = yield* KeyCache

    const columns = sql.literal(
      "id, org_id, account_id, key_prefix, name, tier, permissions, models, status, rotation_days, rotation_due_at, replaced_by, created_at, last_used_at, revoked_at"
    )
    const select = sql`SELECT ${columns} FROM api_keys`

    /** The actor's organisation and its direct sub-organisations (partner mode). */
    const inReach = (actor: Actor, orgId: string) =>
      orgId === actor.orgId
        ? Effect.succeed(true)
        : sql`SELECT 1 FROM organisations WHERE id = ${orgId} AND parent_id = ${actor.orgId}`.pipe(
          Effect.map((r) => r.length > 0),
          Effect.orDie
        )

    const load = (actor: Actor, keyId: string, lock = false) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`${select} WHERE id = ${keyId}${lock ? sql` FOR UPDATE` : sql``}`
        const row = rows[0]
        if (row === undefined || !(yield* inReach(actor, row.org_id))) return yield* new KeyNotFound({ keyId })
        return row
      })

    /** Inside the caller's transaction. `accountId` names the v1 chain the key's calls are sealed into. */
    const insertKey = (orgId: string, accountId: string, fields: { name: string | null; permissions: ReadonlyArray<string> | null; models: ReadonlyArray<string> | null; rotationDays: number | null; tier: string }) =>
      Effect.gen(function*() {
        const apiKey = newGatewayKey()
        const id = newKeyId()
        const rows = yield* sql<Row>`INSERT INTO api_keys ${
          sql.insert({
            id,
            org_id: orgId,
            account_id: accountId,
            key_hash: sha256HexSync(apiKey),
            key_prefix: keyPrefixOf(apiKey),
            tier: fields.tier,
            name: fields.name,
            permissions: json(fields.permissions),
            models: json(fields.models),
            rotation_days: fields.rotationDays
          })
        } RETURNING ${columns}`
        return { apiKey, record: toRecord(rows[0]) } satisfies MintedKey
      })

    const create = (actor: Actor, input: KeyChanges & { orgId?: string }) =>
      Effect.gen(function*() {
        const orgId = input.orgId ?? actor.orgId
        if (!(yield* inReach(actor, orgId))) {
          return yield* new OrganisationNotFound({ orgId })
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          const minted = yield* insertKey(orgId, yield* receiptAccountOf(sql, orgId), {
            name: input.name ?? null,
            permissions: input.permissions ?? null,
            models: input.models ?? null,
            rotationDays: input.rotationDays ?? null,
            tier: PORTAL_KEY_TIER
          })
          const { record } = minted
          yield* appendAudit(sql, {
            actor: actor.id,
            action: "key.created",
            target: record.id,
            orgId,
            details: { key_prefix: record.keyPrefix, name: record.name, permissions: record.permissions, models: record.models, rotation_days: record.rotationDays }
          })
          yield* outbox.record({
            orgId,
            event: "key.created",
            data: { key_id: record.id, key_prefix: record.keyPrefix, tier: record.tier, source: "portal" }
          })
          return minted
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

    const update = (actor: Actor, keyId: string, changes: KeyChanges) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = yield* load(actor, keyId, true)
        if (row.status !== "active") return yield* new KeyNotActive({ status: row.status })
        const set: Record<string, unknown> = {}
        if (changes.name !== undefined) set.name = changes.name
        if (changes.permissions !== undefined) set.permissions = json(changes.permissions)
        if (changes.models !== undefined) set.models = json(changes.models)
        if (changes.rotationDays !== undefined) {
          set.rotation_days = changes.rotationDays
          // A new policy starts counting afresh from the key's creation; a removed policy clears a pending due mark.
          set.rotation_due_at = null
        }
        if (Object.keys(set).length === 0) return toRecord(row)
        const rows = yield* sql<Row>`UPDATE api_keys SET ${sql.update(set)} WHERE id = ${keyId}
          RETURNING ${columns}`
        yield* appendAudit(sql, {
          actor: actor.id,
          action: "key.updated",
          target: keyId,
          orgId: row.org_id,
          details: { changed: Object.keys(changes).filter((k) => (changes as Record<string, unknown>)[k] !== undefined), ...changes }
        })
        return toRecord(rows[0])
      })).pipe(Effect.ensuring(keyCache.evict(keyId)), Effect.catchTag("SqlError", Effect.die))

    const rotate = (actor: Actor, keyId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = yield* load(actor, keyId, true)
        if (row.status !== "active") return yield* new KeyNotActive({ status: row.status })
        // The successor seals into its predecessor's chain: a rotation never breaks a customer's receipt chain.
        const minted = yield* insertKey(row.org_id, row.account_id, {
          name: row.name,
          permissions: row.permissions,
          models: row.models,
          rotationDays: row.rotation_days === null ? null : Number(row.rotation_days),
          tier: row.tier
        })
        // `rotated` is not `active`: Keys.authenticate refuses the old key from this commit on.
        yield* sql`UPDATE api_keys SET status = 'rotated', revoked_at = now(), replaced_by = ${minted.record.id} WHERE id = ${keyId}`
        const trigger = row.rotation_due_at === null ? "manual" : "policy"
        yield* appendAudit(sql, {
          actor: actor.id,
          action: "key.rotated",
          target: keyId,
          orgId: row.org_id,
          details: { new_key_id: minted.record.id, new_key_prefix: minted.record.keyPrefix, trigger }
        })
        yield* outbox.record({
          orgId: row.org_id,
          event: "key.rotated",
          data: {
            key_id: keyId,
            key_prefix: row.key_prefix,
            new_key_id: minted.record.id,
            new_key_prefix: minted.record.keyPrefix,
            trigger
          }
        })
        return minted
      })).pipe(Effect.ensuring(keyCache.evict(keyId)), Effect.catchTag("SqlError", Effect.die))

    const revoke = (actor: Actor, keyId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = yield* load(actor, keyId, true)
        if (row.status === "revoked") return toRecord(row)
        const rows = yield* sql<Row>`UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE id = ${keyId}
          RETURNING ${columns}`
        yield* appendAudit(sql, { actor: actor.id, action: "key.revoked", target: keyId, orgId: row.org_id, details: { key_prefix: row.key_prefix } })
        yield* outbox.record({ orgId: row.org_id, event: "key.revoked", data: { key_id: keyId, key_prefix: row.key_prefix } })
        return toRecord(rows[0])
      })).pipe(Effect.ensuring(keyCache.evict(keyId)), Effect.catchTag("SqlError", Effect.die))

    const markDueRotations = sql<{ id: string; org_id: string }>`
      UPDATE api_keys SET rotation_due_at = now()
      WHERE status = 'active' AND rotation_days IS NOT NULL AND rotation_due_at IS NULL
        AND created_at + make_interval(days => rotation_days) <= now()
      RETURNING id, org_id`.pipe(
      Effect.tap((rows) =>
        Effect.forEach(rows, (r) =>
          appendAudit(sql, { actor: "rotation-policy", action: "key.rotation_due", target: r.id, orgId: r.org_id }))),
      Effect.map((rows) => rows.length),
      Effect.orDie
    )

    // The scheduled rotation policy: a supervised fiber that lives as long as the gateway and survives failures.
    const intervalSeconds = config.settings.keyRotationCheckSeconds
    yield* markDueRotations.pipe(
      Effect.catchCause((cause) => Effect.logWarning("key rotation check failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(intervalSeconds))),
      Effect.forkScoped
    )

    return KeyManagement.of({
      create,
      list: (actor, orgId) =>
        Effect.gen(function*() {
          const target = orgId ?? actor.orgId
          if (!(yield* inReach(actor, target))) return yield* new OrganisationNotFound({ orgId: target })
          const rows = yield* sql<Row>`${select} WHERE org_id = ${target} ORDER BY created_at DESC, id`.pipe(Effect.orDie)
          return rows.map(toRecord)
        }),
      get: (actor, keyId) => load(actor, keyId).pipe(Effect.map(toRecord), Effect.catchTag("SqlError", Effect.die)),
      update,
      rotate,
      revoke,
      markDueRotations,
      audit: ({ orgId, limit, before }) =>
        sql<{ id: string; at: unknown; actor: string; action: string; target: string | null; org_id: string | null; details: unknown }>`
          SELECT id::text AS id, at, actor, action, target, org_id, details FROM audit_log
          WHERE ${orgId === undefined ? sql`TRUE` : sql`org_id = ${orgId}`}
            AND ${before === undefined ? sql`TRUE` : sql`id < ${before}::bigint`}
          ORDER BY id DESC LIMIT ${limit}`.pipe(
          Effect.map((rows) =>
            rows.map((r): AuditRow => ({ id: r.id, at: isoOrNull(r.at)!, actor: r.actor, action: r.action, target: r.target, orgId: r.org_id, details: r.details }))),
          Effect.orDie
        )
    })
  })
)
