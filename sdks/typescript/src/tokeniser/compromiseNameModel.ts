/**
 * The opt-in `compromise` name model (setting "compromise"): the built-in portable model plus the compromise NLP
 * library's people finder (compromiseNames.ts). JavaScript only and about four times slower than the built-in
 * model, for a small recall gain measured in docs/tokeniser.md ("Names"). Loaded on first use, like the built-in
 * model; a load that fails is the model being unavailable (fail-closed).
 */
import { type NameModel, NameModelUnavailable } from "./NameModel.ts"

type CompromiseNames = typeof import("./compromiseNames.ts")

let loading: Promise<CompromiseNames> | undefined

export const loadCompromiseNameModel = (): Promise<CompromiseNames> =>
  (loading ??= import("./compromiseNames.ts").catch((error: unknown) => {
    loading = undefined
    throw new NameModelUnavailable(`the compromise name model could not be loaded: ${(error as Error).message}`)
  }))

export const compromiseNameModel: NameModel = {
  detect: async (text, options) => (await loadCompromiseNameModel()).detectCompromiseNames(text, options)
}
