import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Wallets } from "../../services/Wallets.ts"
import { formatUsd } from "../../src/billing/money.ts"
import { requirePortal } from "./auth.ts"

/** Wallet reads for portal tokens with `ability:billing.read`. */
export const BillingRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const wallets = yield* Wallets
  yield* router.add("GET", "/api/v1/billing/balance", Effect.gen(function*() {
    const portal = yield* requirePortal("ability:billing.read")
    const balance = yield* wallets.balance(portal.orgId)
    return HttpServerResponse.jsonUnsafe({ balance_micros: Number(balance), balance_usd: formatUsd(balance) })
  }))
}))
