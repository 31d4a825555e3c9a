/**
 * The heavy half of the MCP server, loaded on first need: the tokenisation engine (its name model's NLP library, the
 * name gazetteer, the phone-number metadata) and the gateway client. Importing them is most of a cold start, so the
 * server answers `initialize` and `tools/list` without them and loads them in the background right after (`warmUp`);
 * a tool that needs them before then waits for the same load.
 */
import type { NameModel } from "../tokeniser/index.ts"

export type EngineModules = typeof import("./engineModules.ts")

let loading: Promise<EngineModules> | undefined

/** The engine modules, imported once per process. */
export const loadEngine = (): Promise<EngineModules> => (loading ??= import("./engineModules.ts"))

/**
 * Loads the engine and, for the built-in name model, runs it once on a short text, so the first real call pays
 * neither (a name model service is not called: nothing is sent anywhere before a tool asks). A failure is not
 * reported here: the tool that needs the engine meets it and answers it as a tool error.
 */
export const warmUp = async (names: () => Promise<NameModel | "off">, builtin: boolean): Promise<void> => {
  try {
    await loadEngine()
    const model = await names()
    if (builtin && model !== "off") await model.detect("Jane Doe wrote to Anna.", { signal: AbortSignal.timeout(5000) })
  } catch {
    // Reported by the first tool call that needs it.
  }
}
