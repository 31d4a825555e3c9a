/**
 * The alias map of ONE MCP session: alias -> original, in memory only (never written anywhere), so `detokenise` and
 * `reconstruct` restore only what this session tokenised. Bounded: at most `maxEntries` aliases (the oldest are
 * forgotten first), and all of them are forgotten after `idleMs` without use, so a long-lived server does not keep
 * personal data around for sessions nobody uses.
 */
export interface SessionAliasesOptions {
  readonly maxEntries: number
  readonly idleMs: number
  readonly now?: () => number
}

export interface SessionAliases {
  /** Remembers every alias of `map` (a tokenise call's aliases). */
  readonly add: (map: ReadonlyMap<string, string>) => void
  /** The original of `alias`, when this session still holds it. */
  readonly get: (alias: string) => string | undefined
  readonly size: () => number
  readonly clear: () => void
}

export const createSessionAliases = (options: SessionAliasesOptions): SessionAliases => {
  const now = options.now ?? Date.now
  // A Map iterates in insertion order: the first key is the oldest alias.
  const map = new Map<string, string>()
  let lastUsed = now()
  const touch = () => {
    const at = now()
    if (at - lastUsed > options.idleMs) map.clear()
    lastUsed = at
  }
  return {
    add: (entries) => {
      touch()
      for (const [alias, original] of entries) {
        map.delete(alias)
        map.set(alias, original)
      }
      while (map.size > options.maxEntries) map.delete(map.keys().next().value!)
    },
    get: (alias) => {
      touch()
      return map.get(alias)
    },
    size: () => {
      touch()
      return map.size
    },
    clear: () => map.clear()
  }
}
