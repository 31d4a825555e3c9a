import { detokenise } from "./detokenise.ts"
import type { AliasMap } from "./types.ts"

export interface StreamingDetokeniser {
  /** Feeds the next chunk; returns the text that is safe to show now. */
  readonly push: (chunk: string) => string
  /** Ends the stream; returns whatever was held back. */
  readonly flush: () => string
}

/**
 * Detokenises a stream whose chunk boundaries may cut an alias in two. An alias starts with its only
 * "<" and ends with its only ">", so only the text from the LAST "<" can be the start of an alias
 * still arriving: it is held back while it is a proper prefix of an alias in the map, and everything
 * before it is released. The concatenated output equals `detokenise` of the whole text.
 */
export const createStreamingDetokeniser = (map: AliasMap): StreamingDetokeniser => {
  const aliases = [...map.keys()]
  let pending = ""
  return {
    push: (chunk) => {
      pending += chunk
      const lt = pending.lastIndexOf("<")
      if (lt !== -1) {
        const tail = pending.slice(lt)
        if (aliases.some((a) => a.length > tail.length && a.startsWith(tail))) {
          const ready = pending.slice(0, lt)
          pending = tail
          return detokenise(ready, map)
        }
      }
      const ready = pending
      pending = ""
      return detokenise(ready, map)
    },
    flush: () => {
      const rest = pending
      pending = ""
      return detokenise(rest, map)
    }
  }
}
