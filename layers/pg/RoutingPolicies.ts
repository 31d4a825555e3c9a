import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { RoutingPolicies } from "../../services/RoutingPolicies.ts"
import { BoundedLru } from "../../src/cache/boundedLru.ts"

/**
 * Policies are read on every relay call, so each node caches an organisation's list for this long: a change
 * reaches every node within it (the node that made it sees it at once).
 */
const CACHE_MS = 30_000
/** Organisations cached at once; the least recently used goes first. */
const CACHED_ORGS = 50_000

export const RoutingPoliciesPg = Layer.effect(
  RoutingPolicies,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cache = new BoundedLru<string, { readonly at: number; readonly fallbacks: ReadonlyArray<string> }>(CACHED_ORGS)
    return RoutingPolicies.of({
      fallbacksOf: (orgId) =>
        Effect.gen(function*() {
          const hit = cache.get(orgId)
          if (hit !== undefined && Date.now() - hit.at < CACHE_MS) return hit.fallbacks
          const rows = yield* sql<{ fallbacks: unknown }>`SELECT fallbacks FROM org_routing_policies WHERE org_id = ${orgId}`.pipe(Effect.orDie)
          const stored = rows[0]?.fallbacks
          const parsed: unknown = typeof stored === "string" ? JSON.parse(stored) : stored
          const fallbacks = Array.isArray(parsed) ? parsed.filter((m): m is string => typeof m === "string") : []
          cache.set(orgId, { at: Date.now(), fallbacks })
          return fallbacks
        }),
      setFallbacks: (orgId, fallbacks) =>
        (fallbacks.length === 0
          ? sql`DELETE FROM org_routing_policies WHERE org_id = ${orgId}`
          : sql`INSERT INTO org_routing_policies (org_id, fallbacks) VALUES (${orgId}, ${JSON.stringify(fallbacks)}::jsonb)
              ON CONFLICT (org_id) DO UPDATE SET fallbacks = EXCLUDED.fallbacks, updated_at = now()`).pipe(
          Effect.tap(() => Effect.sync(() => cache.delete(orgId))),
          Effect.asVoid,
          Effect.orDie
        )
    })
  })
)
