import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type LimitOverride, OrgLimits } from "../../services/OrgLimits.ts"
import { BoundedLru } from "../../src/cache/boundedLru.ts"

/**
 * Overrides are read on every relay call, so each node caches an organisation's rows for this long: a change
 * reaches every node within it (the node that made it sees it at once).
 */
const CACHE_MS = 30_000
/** Organisations cached at once; the least recently used goes first. */
const CACHED_ORGS = 50_000

type Row = { capability: string; monthly_tokens: string | null; per60: number | null; per3600: number | null }

export const OrgLimitsPg = Layer.effect(
  OrgLimits,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cache = new BoundedLru<string, { at: number; rows: ReadonlyArray<Row> }>(CACHED_ORGS)
    const rowsOf = (orgId: string) =>
      Effect.gen(function*() {
        const hit = cache.get(orgId)
        if (hit !== undefined && Date.now() - hit.at < CACHE_MS) return hit.rows
        const rows = yield* sql<Row>`
          SELECT capability, monthly_tokens::text AS monthly_tokens, per60, per3600 FROM org_limits WHERE org_id = ${orgId}`.pipe(Effect.orDie)
        cache.set(orgId, { at: Date.now(), rows })
        return rows
      })
    const pick = (rows: ReadonlyArray<Row>, field: "monthly_tokens" | "per60" | "per3600", capability: string) => {
      const own = rows.find((r) => r.capability === capability)?.[field]
      const all = rows.find((r) => r.capability === "*")?.[field]
      const v = own ?? all
      return v === null || v === undefined ? undefined : Number(v)
    }
    return OrgLimits.of({
      forOrg: (orgId, capability) =>
        Effect.map(rowsOf(orgId), (rows): LimitOverride => {
          if (rows.length === 0) return {}
          return {
            monthlyTokens: pick(rows, "monthly_tokens", capability),
            per60: pick(rows, "per60", capability),
            per3600: pick(rows, "per3600", capability)
          }
        }),
      set: (orgId, capability, o) =>
        sql`INSERT INTO org_limits ${
          sql.insert({
            org_id: orgId,
            capability,
            monthly_tokens: o.monthlyTokens === null ? null : String(o.monthlyTokens),
            per60: o.per60,
            per3600: o.per3600
          })
        } ON CONFLICT (org_id, capability) DO UPDATE SET monthly_tokens = EXCLUDED.monthly_tokens, per60 = EXCLUDED.per60,
          per3600 = EXCLUDED.per3600`.pipe(
          Effect.tap(() => Effect.sync(() => cache.delete(orgId))),
          Effect.asVoid,
          Effect.orDie
        )
    })
  })
)
