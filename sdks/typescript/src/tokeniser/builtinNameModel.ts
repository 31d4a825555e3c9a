/**
 * The built-in name model: compromise, the gazetteer and the name rules (builtinNames.ts), loaded on first use. An
 * application that never uses it (name model "off" or a name model service) never loads that code, and a browser
 * bundle keeps it in a chunk of its own, fetched when the first text is scanned for names. A load that fails is the
 * model being unavailable (fail-closed: nothing is sent), and the next call tries again.
 */
import { type NameModel, NameModelUnavailable } from "./NameModel.ts"

type BuiltinNames = typeof import("./builtinNames.ts")

let loading: Promise<BuiltinNames> | undefined

/** Loads the built-in name model's code (once); call it early to take the load off the first request. */
export const loadBuiltinNameModel = (): Promise<BuiltinNames> =>
  (loading ??= import("./builtinNames.ts").catch((error: unknown) => {
    loading = undefined
    throw new NameModelUnavailable(`the built-in name model could not be loaded: ${(error as Error).message}`)
  }))

export const builtinNameModel: NameModel = {
  detect: async (text, options) => (await loadBuiltinNameModel()).detectBuiltinNames(text, options)
}
