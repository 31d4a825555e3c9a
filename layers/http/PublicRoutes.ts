import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../src/keys/scopes.ts"
import { API_ROUTES } from "./api/apiRoutes.ts"

/**
 * The scope vocabulary with what each scope lets a key call: every documented route that requires it (from the route
 * registry, so a new relay route shows up under its scope by itself). A key with no scopes may call all of them.
 */
export const scopeVocabulary = () => ({
  scopes: SCOPES.map((name) => ({
    name,
    description: SCOPE_DESCRIPTIONS[name],
    routes: API_ROUTES.filter((r) => r.auth.kind === "gatewayKey" && r.auth.scope === name).map((r) => `${r.method} ${r.path}`)
  }))
})

/** Health and the published scope vocabulary: no authentication. The model list is in ModelRoutes. */
export const PublicRoutes = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))
  yield* router.add("GET", "/api/v1/keys/scopes", HttpServerResponse.jsonUnsafe(scopeVocabulary()))
}))
