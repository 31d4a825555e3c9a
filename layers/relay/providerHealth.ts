/**
 * Which providers failed recently (429, 5xx, timeout, unreachable before the first byte). A call with fallbacks
 * skips such a provider until its cool-down has passed, so one outage does not cost every call a failed round trip
 * first. Per process: each node learns from its own calls. Nothing about the calls' content is kept.
 */
export interface ProviderHealth {
  readonly markFailed: (provider: string) => void
  readonly markHealthy: (provider: string) => void
  readonly isCoolingDown: (provider: string) => boolean
}

export const createProviderHealth = (coolDownMs: number, now: () => number = Date.now): ProviderHealth => {
  const until = new Map<string, number>()
  return {
    markFailed: (provider) => {
      until.set(provider, now() + coolDownMs)
    },
    markHealthy: (provider) => {
      until.delete(provider)
    },
    isCoolingDown: (provider) => {
      const t = until.get(provider)
      if (t === undefined) return false
      if (t <= now()) {
        until.delete(provider)
        return false
      }
      return true
    }
  }
}

