import { BoundedLru } from "../cache/boundedLru.ts"

/**
 * A bounded, least-recently-used map from a key's hash to what authenticating it resolved to, with a time-to-live
 * backstop and eviction by key id (a change to a key names its id, not its hash).
 *
 * A lookup that misses reads the database and then stores what it read. A change committed while that read was in
 * flight must not be overwritten by the stale row, so every eviction bumps `generation`, and `store` refuses a value
 * whose read began under an earlier generation. `enabled: false` (while the change listener is down) turns the cache
 * off entirely: nothing is served from it and nothing is stored.
 */
export interface PrincipalCache<P extends { readonly keyId: string }> {
  readonly get: (hash: string) => P | undefined
  /** Read this before starting a database lookup and pass it to `store`. */
  readonly generation: () => number
  readonly store: (hash: string, principal: P, generationAtRead: number) => void
  readonly evictKey: (keyId: string) => void
  readonly clear: () => void
  readonly setEnabled: (enabled: boolean) => void
  readonly size: () => number
}

interface Entry<P> {
  readonly principal: P
  readonly expiresAt: number
}

export const makePrincipalCache = <P extends { readonly keyId: string }>(options: {
  readonly maxEntries: number
  readonly ttlMs: number
  readonly now?: () => number
  readonly enabled?: boolean
}): PrincipalCache<P> => {
  const now = options.now ?? Date.now
  const hashOfKey = new Map<string, string>()
  /** A key id points at the hash it was cached under only while that entry is cached. */
  const forget = (hash: string, entry: Entry<P>) => {
    if (hashOfKey.get(entry.principal.keyId) === hash) hashOfKey.delete(entry.principal.keyId)
  }
  const byHash = new BoundedLru<string, Entry<P>>(options.maxEntries, forget)
  let generation = 0
  let enabled = options.enabled ?? true

  const drop = (hash: string) => {
    const entry = byHash.get(hash)
    if (entry === undefined) return
    byHash.delete(hash)
    forget(hash, entry)
  }

  const clear = () => {
    byHash.clear()
    hashOfKey.clear()
    generation++
  }

  return {
    get: (hash) => {
      if (!enabled) return undefined
      const entry = byHash.get(hash)
      if (entry === undefined) return undefined
      if (entry.expiresAt <= now()) {
        drop(hash)
        return undefined
      }
      return entry.principal
    },
    generation: () => generation,
    store: (hash, principal, generationAtRead) => {
      if (!enabled || generationAtRead !== generation) return
      drop(hash)
      // Past the bound, the least recently used entry goes (and its key id with it, through `forget`).
      byHash.set(hash, { principal, expiresAt: now() + options.ttlMs })
      hashOfKey.set(principal.keyId, hash)
    },
    evictKey: (keyId) => {
      const hash = hashOfKey.get(keyId)
      if (hash !== undefined) drop(hash)
      // Bumped even when nothing was cached: a read of this key may be in flight.
      generation++
    },
    clear,
    setEnabled: (on) => {
      enabled = on
      clear()
    },
    size: () => byHash.size
  }
}
