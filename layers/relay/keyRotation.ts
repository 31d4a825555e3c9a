/**
 * Spreads the calls to a provider with several pooled keys across them, round-robin, skipping for the cool-down
 * (PROVIDER_COOLDOWN_MS) a key whose call failed before the first byte (429, 5xx, timeout, unreachable). Per
 * process, like ProviderHealth; keys are known by slot number only.
 */
export interface KeyRotation {
  /**
   * The slots to try for one call, in order: the healthy ones starting from the next in turn; when none is
   * healthy, only the one that failed least recently (a provider never refuses because its keys are cooling).
   */
  readonly order: (provider: string, count: number) => ReadonlyArray<number>
  readonly markFailed: (provider: string, slot: number) => void
  readonly markHealthy: (provider: string, slot: number) => void
}

export const createKeyRotation = (coolDownMs: number, now: () => number = Date.now): KeyRotation => {
  const next = new Map<string, number>()
  const failedAt = new Map<string, number>()
  const name = (provider: string, slot: number) => `${provider}#${slot}`
  const cooling = (provider: string, slot: number) => {
    const t = failedAt.get(name(provider, slot))
    return t !== undefined && t + coolDownMs > now()
  }
  return {
    order: (provider, count) => {
      if (count < 2) return [0]
      const start = (next.get(provider) ?? 0) % count
      next.set(provider, start + 1)
      const rotated = Array.from({ length: count }, (_, i) => (start + i) % count)
      const healthy = rotated.filter((slot) => !cooling(provider, slot))
      if (healthy.length > 0) return healthy
      const leastRecent = rotated.reduce((best, slot) =>
        failedAt.get(name(provider, slot))! < failedAt.get(name(provider, best))! ? slot : best
      )
      return [leastRecent]
    },
    markFailed: (provider, slot) => {
      failedAt.set(name(provider, slot), now())
    },
    markHealthy: (provider, slot) => {
      failedAt.delete(name(provider, slot))
    }
  }
}
