import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../../services/AppConfig.ts"
import { Byok, type ByokCredentialInfo } from "../../services/Byok.ts"
import { KeyEncryption } from "../../services/KeyEncryption.ts"

/** Bound on cached organisations; beyond it the cache starts afresh (a cold entry costs one indexed SELECT). */
const MAX_CACHED_ORGS = 50_000

/** Additional data binding a ciphertext to its row: a key copied to another organisation or provider fails to open. */
export const byokContext = (orgId: string, provider: string) => `byok:${orgId}:${provider}`

type Row = { provider: string; last4: string; created_at: Date | string }
type Entry = { readonly at: number; readonly keys: ReadonlyMap<string, string> }

const info = (r: Row): ByokCredentialInfo => ({ provider: r.provider, last4: r.last4, createdAt: new Date(r.created_at) })

export const ByokPg = Layer.effect(
  Byok,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const encryption = yield* KeyEncryption
    const config = yield* AppConfig
    const ttlMs = config.settings.byokCacheTtlMs

    const cache = new Map<string, Entry>()
    // Bumped on every local change: a load that started before the change must not repopulate the cache with
    // what it read (it may predate the change).
    const generation = new Map<string, number>()
    const invalidate = (orgId: string) => {
      cache.delete(orgId)
      generation.set(orgId, (generation.get(orgId) ?? 0) + 1)
    }

    const load = (orgId: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ provider: string; ciphertext: string }>`
          SELECT provider, ciphertext FROM byok_credentials WHERE org_id = ${orgId}`.pipe(Effect.orDie)
        const keys = new Map<string, string>()
        for (const r of rows) keys.set(r.provider, yield* encryption.open(r.ciphertext, byokContext(orgId, r.provider)))
        return keys
      })

    const credentialsOf = (orgId: string) =>
      Effect.suspend(() => {
        const hit = cache.get(orgId)
        if (hit !== undefined && Date.now() - hit.at < ttlMs) return Effect.succeed(hit.keys)
        const gen = generation.get(orgId) ?? 0
        return Effect.tap(load(orgId), (keys) =>
          Effect.sync(() => {
            if (ttlMs === 0 || (generation.get(orgId) ?? 0) !== gen) return
            if (cache.size >= MAX_CACHED_ORGS) cache.clear()
            cache.set(orgId, { at: Date.now(), keys })
          }))
      })

    return Byok.of({
      put: (orgId, provider, apiKey, shown = apiKey.slice(-4)) =>
        Effect.gen(function*() {
          const ciphertext = yield* encryption.seal(apiKey, byokContext(orgId, provider))
          const rows = yield* sql<Row>`
            INSERT INTO byok_credentials ${sql.insert({ org_id: orgId, provider, ciphertext, last4: shown.slice(-4) })}
            ON CONFLICT (org_id, provider) DO UPDATE
              SET ciphertext = EXCLUDED.ciphertext, last4 = EXCLUDED.last4, created_at = now()
            RETURNING provider, last4, created_at`.pipe(Effect.orDie)
          invalidate(orgId)
          return info(rows[0]!)
        }),
      list: (orgId) =>
        sql<Row>`SELECT provider, last4, created_at FROM byok_credentials WHERE org_id = ${orgId} ORDER BY provider`.pipe(
          Effect.map((rows) => rows.map(info)),
          Effect.orDie
        ),
      remove: (orgId, provider) =>
        sql<{ provider: string }>`
          DELETE FROM byok_credentials WHERE org_id = ${orgId} AND provider = ${provider} RETURNING provider`.pipe(
          Effect.orDie,
          Effect.tap(() => Effect.sync(() => invalidate(orgId))),
          Effect.map((rows) => rows.length > 0)
        ),
      credentialsOf
    })
  })
)
