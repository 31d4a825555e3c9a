import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { ProviderRouter } from "../../services/ProviderRouter.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import { modelList } from "../../src/providers/modelList.ts"
import { requireGatewayKey } from "./auth.ts"

/**
 * `GET /api/v1/models`: the models the caller can call now, so an SDK's `models.list()` offers nothing that would
 * fail with `provider_not_configured`. With a gateway key: its organisation's view (pooled providers plus the ones it
 * stored a BYOK key for, within the key's model allowlist; a bad key is 401 like on the relay routes). Without one:
 * the models any key can call with the gateway's pooled keys. `?include=unavailable` lists the whole catalogue with
 * `available: false` on the rest (to see which providers a BYOK key would open).
 */
export const ModelRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const providers = yield* ProviderRouter
  yield* router.add(
    "GET",
    "/api/v1/models",
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const include = new URL(request.url, "http://gateway.local").searchParams.get("include")
      if (include !== null && include !== "unavailable") {
        return yield* new ApiError({
          status: 400,
          code: "invalid_request",
          message: `Unknown include value "${include.slice(0, 32)}" (use include=unavailable).`,
          extra: { details: { path: "include" } }
        })
      }
      const principal = request.headers["authorization"] === undefined ? undefined : yield* requireGatewayKey(undefined, { demo: "allowed" })
      const available = yield* providers.callable(principal)
      return HttpServerResponse.jsonUnsafe(modelList(available, include === "unavailable"))
    })
  )
}))
