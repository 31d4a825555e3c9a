import { Effect, Layer } from "effect"
import { AppConfig } from "../services/AppConfig.ts"
import { OrgLimits } from "../services/OrgLimits.ts"
import { Quotas } from "../services/Quotas.ts"
import { RelayLimits } from "../services/RelayLimits.ts"
import { RateWindows, type WindowVerdict } from "../services/RateWindows.ts"
import { limitsForTier, parseTierLimits } from "../src/billing/limits.ts"
import { monthKey, secondsUntilNextMonth } from "../src/billing/month.ts"
import { ApiError } from "../src/http/ApiError.ts"

/** IETF httpapi RateLimit headers (draft-ietf-httpapi-ratelimit-headers): one policy item per window. */
const rateLimitHeaders = (named: ReadonlyArray<readonly [string, number, WindowVerdict]>) => ({
  "ratelimit-policy": named.map(([name, w, v]) => `"${name}";q=${v.limit};w=${w}`).join(", "),
  ratelimit: named
    .map(([name, _w, v]) => `"${name}";r=${Math.max(0, v.limit - v.count)};t=${Math.ceil(v.resetMs / 1000)}`)
    .join(", ")
})

export const RelayLimitsLive = Layer.effect(
  RelayLimits,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const windows = yield* RateWindows
    const tiers = yield* Effect.try(() => parseTierLimits(config.env.RATE_LIMITS_JSON)).pipe(Effect.orDie)
    const quotas = yield* Quotas
    const orgLimits = yield* OrgLimits
    return RelayLimits.of({
      admit: (principal, capability) =>
        Effect.gen(function*() {
          const tier = limitsForTier(tiers, principal.tier)
          const override = yield* orgLimits.forOrg(principal.orgId, capability)
          const limits = {
            ...tier,
            tenantPer60s: override.per60 ?? tier.tenantPer60s,
            tenantPer3600s: override.per3600 ?? tier.tenantPer3600s,
            monthlyTokens: override.monthlyTokens ?? tier.monthlyTokens
          }
          // The monthly quota is checked first, so a refused call does not use up a rate-window slot.
          const now = new Date()
          let quotaHeaders: { policy: string; state: string } | undefined
          if (limits.monthlyTokens !== null) {
            const used = yield* quotas.used(principal.orgId, capability, monthKey(now))
            const reset = secondsUntilNextMonth(now)
            quotaHeaders = {
              policy: `"tenant-month";q=${limits.monthlyTokens};w=2592000`,
              state: `"tenant-month";r=${Math.max(0, limits.monthlyTokens - used)};t=${reset}`
            }
            if (used >= limits.monthlyTokens) {
              return yield* new ApiError({
                status: 429,
                code: "quota_exceeded",
                message: `The monthly token quota for ${capability} (${limits.monthlyTokens} tokens) is used up; it resets at the start of next month (UTC).`,
                extra: { quota_tokens: limits.monthlyTokens, used_tokens: used },
                headers: { "ratelimit-policy": quotaHeaders.policy, ratelimit: quotaHeaders.state, "retry-after": String(reset) }
              })
            }
          }
          const specs: Array<readonly [string, number, { key: string; windowMs: number; limit: number }]> = [
            ["tenant-60s", 60, { key: `t60:${principal.orgId}:${capability}`, windowMs: 60_000, limit: limits.tenantPer60s }],
            ["tenant-3600s", 3600, { key: `t3600:${principal.orgId}:${capability}`, windowMs: 3_600_000, limit: limits.tenantPer3600s }]
          ]
          if (limits.keyPerMinute !== null) {
            specs.unshift(["key", 60, { key: `k60:${principal.keyId}`, windowMs: 60_000, limit: limits.keyPerMinute }])
          }
          const verdicts = yield* windows.hitAll(specs.map(([, , s]) => s))
          const windowHeaders = rateLimitHeaders(specs.map(([name, w], i) => [name, w, verdicts[i]] as const))
          const headers = quotaHeaders === undefined ? windowHeaders : {
            "ratelimit-policy": `${windowHeaders["ratelimit-policy"]}, ${quotaHeaders.policy}`,
            ratelimit: `${windowHeaders.ratelimit}, ${quotaHeaders.state}`
          }
          if (!verdicts[0].allowed) {
            const retryAfter = Math.ceil(Math.max(...verdicts.map((v) => v.retryAfterMs)) / 1000)
            const full = specs.filter((_, i) => verdicts[i].full).map(([name]) => name)
            return yield* new ApiError({
              status: 429,
              code: "rate_limited",
              message: `Rate limit reached (${full.join(", ")}). Retry after ${retryAfter} s.`,
              extra: { limits: full },
              headers: { ...headers, "retry-after": String(Math.max(1, retryAfter)) }
            })
          }
          return headers
        })
    })
  })
)
