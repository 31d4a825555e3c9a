/**
 * The provider catalogue as an OpenAI-style model list (`GET /api/v1/models`), each model with its provider,
 * routes, list prices and whether the caller can call it now.
 */
import { CAPABILITIES, findModel, type ModelLookup, modelServesRoute, PROVIDERS } from "./catalogue.ts"

export interface ModelListEntry {
  /** What `model` accepts: the bare id, or `provider/model` for a model an earlier provider also offers. */
  readonly id: string
  readonly object: "model"
  readonly owned_by: string
  readonly provider: string
  readonly pooled: boolean
  readonly byok: boolean
  /** The routes the model is served on, those reached by format translation included. */
  readonly capabilities: ReadonlyArray<string>
  readonly input_usd_per_mtok: string
  readonly output_usd_per_mtok: string
  /** True when the caller can call the model now (its provider is configured for it); see docs/relay.md. */
  readonly available: boolean
}

/** Every catalogue model, in catalogue order (the built-in `local` models first). */
const ENTRIES: ReadonlyArray<{ readonly lookup: ModelLookup; readonly id: string }> = PROVIDERS.flatMap((provider) =>
  provider.models.map((model) => ({
    lookup: { provider, model },
    // A model id offered by several providers resolves to the first; the others are addressed as provider/model.
    id: findModel(model.id)?.provider.slug === provider.slug ? model.id : `${provider.slug}/${model.id}`
  }))
)

/**
 * The list: only the models `available` admits, or with `includeUnavailable` the whole catalogue, each entry marked.
 */
export const modelList = (
  available: (lookup: ModelLookup) => boolean,
  includeUnavailable: boolean
): { readonly object: "list"; readonly data: ReadonlyArray<ModelListEntry> } => ({
  object: "list",
  data: ENTRIES.flatMap(({ lookup: { provider, model }, id }) => {
    const callable = available({ provider, model })
    if (!callable && !includeUnavailable) return []
    return [{
      id,
      object: "model" as const,
      owned_by: provider.slug,
      provider: provider.slug,
      pooled: provider.pooled,
      byok: provider.byok,
      capabilities: CAPABILITIES.filter((route) => modelServesRoute({ provider, model }, route)),
      input_usd_per_mtok: model.inputUsdPerMTok,
      output_usd_per_mtok: model.outputUsdPerMTok,
      available: callable
    }]
  })
})
