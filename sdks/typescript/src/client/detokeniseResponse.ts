/**
 * Restores this request's originals in a gateway response body. JSON bodies are parsed and every
 * string value is detokenised (tool-call `arguments` with JSON-escaped originals), then re-serialised:
 * splicing originals into the raw JSON text could break it (an original may contain `"` or `\`).
 * Non-JSON bodies are detokenised as text.
 * Only aliases in `map` (this request's) are replaced; everything else is left untouched. With an empty map the text
 * is returned as it is.
 */
import { detokenise } from "../tokeniser/detokenise.ts"
import { detokeniseJsonValue } from "../tokeniser/detokeniseJsonValue.ts"
import type { AliasMap } from "../tokeniser/types.ts"

export const detokeniseResponseText = (text: string, map: AliasMap): string => {
  // Nothing of this request was aliased (most chat turns): the body is passed on as the gateway sent it, without a
  // parse and re-serialisation that change nothing but whitespace (issue 41: ~10 us per "Say hello." call).
  if (map.size === 0) return text
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return detokenise(text, map)
  }
  return JSON.stringify(detokeniseJsonValue(parsed, map))
}
