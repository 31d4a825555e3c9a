import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Wallets } from "../../services/Wallets.ts"
import { formatUsd } from "../../src/billing/money.ts"
import { requireGatewayKey } from "./auth.ts"
import { usageResponse } from "./BillingRoutes.ts"

/**
 * Read-only views of a gateway key's OWN organisation, authenticated by the key alone (docs/decisions.md: the
 * portal routes refuse gateway keys, yet an MCP host or script holding only a key must see what it spends):
 * `GET /api/v1/self/balance`, `GET /api/v1/self/usage` (same shape as the portal's billing usage) and
 * `GET /api/v1/self/key` (the key's scopes and model allowlist). Nothing here changes state or reads another
 * organisation. Demo keys are refused (403 `demo_key_restricted`): they may only relay.
 */
export const KeySelfRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const wallets = yield* Wallets
  yield* router.add("GET", "/api/v1/self/balance", Effect.gen(function*() {
    const principal = yield* requireGatewayKey(undefined)
    const balance = yield* wallets.balance(principal.orgId)
    return HttpServerResponse.jsonUnsafe({ org_id: principal.orgId, balance_micros: Number(balance), balance_usd: formatUsd(balance) })
  }))
  yield* router.add("GET", "/api/v1/self/usage", Effect.gen(function*() {
    const principal = yield* requireGatewayKey(undefined)
    return yield* usageResponse(principal.orgId)
  }))
  yield* router.add("GET", "/api/v1/self/key", Effect.gen(function*() {
    const principal = yield* requireGatewayKey(undefined)
    return HttpServerResponse.jsonUnsafe({
      key_prefix: principal.keyPrefix,
      org_id: principal.orgId,
      tier: principal.tier,
      permissions: [...(principal.permissions ?? [])],
      models: principal.models === null || principal.models.length === 0 ? null : [...principal.models],
      expires_at: principal.expiresAt === null ? null : new Date(principal.expiresAt).toISOString()
    })
  }))
}))
