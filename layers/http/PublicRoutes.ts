import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../src/keys/scopes.ts"

/** Health and the published scope vocabulary: no authentication. The model list is in ModelRoutes. */
export const PublicRoutes = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))
  yield* router.add(
    "GET",
    "/api/v1/keys/scopes",
    HttpServerResponse.jsonUnsafe({ scopes: SCOPES.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })) })
  )
}))
