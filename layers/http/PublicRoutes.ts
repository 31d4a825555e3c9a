import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SCOPE_DESCRIPTIONS, SCOPES } from "../../src/keys/scopes.ts"
import { findModel, PROVIDERS } from "../../src/providers/catalogue.ts"

/** The catalogue as an OpenAI-style model list, with each model's provider, routes and list prices (public data). */
const MODEL_LIST = {
  object: "list",
  data: PROVIDERS.flatMap((provider) =>
    provider.models.map((model) => ({
      // A model id offered by several providers resolves to the first; the others are addressed as provider/model.
      id: findModel(model.id)?.provider.slug === provider.slug ? model.id : `${provider.slug}/${model.id}`,
      object: "model",
      owned_by: provider.slug,
      provider: provider.slug,
      pooled: provider.pooled,
      byok: provider.byok,
      capabilities: model.capabilities,
      input_usd_per_mtok: model.inputUsdPerMTok,
      output_usd_per_mtok: model.outputUsdPerMTok
    }))
  )
}

/** Health, the published scope vocabulary and the model catalogue: no authentication. */
export const PublicRoutes = HttpRouter.use(Effect.fn(function*(router) {
  yield* router.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))
  yield* router.add("GET", "/api/v1/models", HttpServerResponse.jsonUnsafe(MODEL_LIST))
  yield* router.add(
    "GET",
    "/api/v1/keys/scopes",
    HttpServerResponse.jsonUnsafe({ scopes: SCOPES.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] })) })
  )
}))
