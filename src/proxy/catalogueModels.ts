/**
 * The model list the proxy serves at GET /v1/models when the gateway has no model-list route: every
 * model of the provider catalogue, in the OpenAI list format (ids are what `model` accepts).
 */
import { PROVIDERS } from "../providers/catalogue.ts"

export interface ModelListEntry {
  readonly id: string
  readonly object: "model"
  readonly created: number
  readonly owned_by: string
}

export const catalogueModelList = (): { readonly object: "list"; readonly data: ReadonlyArray<ModelListEntry> } => {
  const seen = new Set<string>()
  const data: Array<ModelListEntry> = []
  for (const provider of PROVIDERS) {
    for (const model of provider.models) {
      // The same model id can be offered by several providers; list it once (the gateway routes it).
      if (seen.has(model.id)) continue
      seen.add(model.id)
      data.push({ id: model.id, object: "model", created: 0, owned_by: provider.slug })
    }
  }
  return { object: "list", data }
}
