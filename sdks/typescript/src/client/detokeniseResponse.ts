/**
 * Restores this request's originals in a gateway response body. JSON bodies are parsed and every
 * string value is detokenised, then re-serialised: splicing originals into the raw JSON text could
 * break it (an original may contain `"` or `\`). Non-JSON bodies are detokenised as text.
 * Only aliases in `map` (this request's) are replaced; everything else is left untouched.
 */
import { detokenise } from "../tokeniser/detokenise.ts"
import type { AliasMap } from "../tokeniser/types.ts"

const detokeniseValue = (value: unknown, map: AliasMap): unknown => {
  if (typeof value === "string") return detokenise(value, map)
  if (Array.isArray(value)) return value.map((item) => detokeniseValue(item, map))
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = detokeniseValue(item, map)
    return out
  }
  return value
}

export const detokeniseResponseText = (text: string, map: AliasMap): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return detokenise(text, map)
  }
  return JSON.stringify(detokeniseValue(parsed, map))
}
