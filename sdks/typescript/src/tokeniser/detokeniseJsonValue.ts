/**
 * Restores originals in a parsed JSON value, string by string. The value of an `arguments` key (a tool call's
 * arguments: JSON text inside a JSON string, in chat completions and in Responses function calls) takes the
 * originals escaped for the inside of a JSON string, so it still parses when an original holds `"`, `\` or a
 * newline. One copy, used by the non-streamed answers and by the whole events of a stream.
 */
import { detokenise } from "./detokenise.ts"
import type { AliasMap } from "./types.ts"

/** Originals escaped for the inside of a JSON string (tool arguments and partial_json stream JSON text). */
export const jsonEscapedMap = (map: AliasMap): AliasMap =>
  new Map([...map].map(([alias, original]) => [alias, JSON.stringify(original).slice(1, -1)]))

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

export const detokeniseJsonValue = (value: unknown, map: AliasMap, escaped: AliasMap = jsonEscapedMap(map), key?: string): unknown => {
  if (typeof value === "string") return detokenise(value, key === "arguments" ? escaped : map)
  if (Array.isArray(value)) return value.map((item) => detokeniseJsonValue(item, map, escaped))
  if (isRecord(value)) {
    const out: Record<string, unknown> = {}
    for (const [k, item] of Object.entries(value)) out[k] = detokeniseJsonValue(item, map, escaped, k)
    return out
  }
  return value
}
