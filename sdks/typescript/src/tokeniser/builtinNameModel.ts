/**
 * The built-in name model: the portable name model (names/nameRules.ts over sdks/vectors/name-model.json, the data
 * the Python and Rust engines read too), loaded on first use. An application that never uses it (name model "off"
 * or a name model service) never loads its data, and a browser bundle keeps it in a chunk of its own, fetched when
 * the first text is scanned for names. A load that fails is the model being unavailable (fail-closed: nothing is
 * sent), and the next call tries again.
 */
import { type NameModel, NameModelUnavailable } from "./NameModel.ts"

type PortableNames = typeof import("./names/nameRules.ts")

let loading: Promise<PortableNames> | undefined

/** Loads the built-in name model's code and data (once); call it early to take the load off the first request. */
export const loadBuiltinNameModel = (): Promise<PortableNames> =>
  (loading ??= import("./names/nameRules.ts").catch((error: unknown) => {
    loading = undefined
    throw new NameModelUnavailable(`the built-in name model could not be loaded: ${(error as Error).message}`)
  }))

export const builtinNameModel: NameModel = {
  detect: async (text, options) => {
    const model = await loadBuiltinNameModel()
    // One linear pass (about 3 ms per 100 KB): an aborted call stops before it, not inside it.
    options?.signal?.throwIfAborted()
    return model.detectNames(text)
  }
}
