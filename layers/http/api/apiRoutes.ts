import type { ApiRoute } from "./ApiRoute.ts"
import { accountRoutes } from "./accounts.ts"
import { adminRoutes } from "./admin.ts"
import { billingRoutes } from "./billing.ts"
import { keyRoutes } from "./keys.ts"
import { modelRoutes } from "./models.ts"
import { operationRoutes } from "./operations.ts"
import { receiptRoutes } from "./receipts.ts"
import { relayRoutes } from "./relay.ts"
import { webhookRoutes } from "./webhooks.ts"

/** Every documented route of the gateway, in the order the reference shows them. */
export const API_ROUTES: ReadonlyArray<ApiRoute> = [
  ...relayRoutes,
  ...modelRoutes,
  ...receiptRoutes,
  ...keyRoutes,
  ...accountRoutes,
  ...billingRoutes,
  ...webhookRoutes,
  ...operationRoutes,
  ...adminRoutes
]

/** The documented route with this method and router path (`/api/keys/:id`); a route that has none is a bug. */
export const apiRoute = (method: ApiRoute["method"], path: string): ApiRoute => {
  const found = API_ROUTES.find((r) => r.method === method && r.path === path)
  if (found === undefined) throw new Error(`${method} ${path} is not in the API registry (layers/http/api)`)
  return found
}
