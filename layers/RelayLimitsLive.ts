import { Effect, Layer } from "effect"
import { AdmissionCounters, type WindowSpec } from "../services/AdmissionCounters.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { OrgLimits } from "../services/OrgLimits.ts"
import { RelayLimits } from "../services/RelayLimits.ts"
import type { WindowVerdict } from "../services/RateWindows.ts"
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
    const counters = yield* AdmissionCounters
    const tiers = yield* Effect.try(() => parseTierLimits(config.env.RATE_LIMITS_JSON)).pipe(Effect.orDie)
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
          const specs: Array<readonly [string, number, WindowSpec]> = [
            ["tenant-60s", 60, { key: `t60:${principal.orgId}:${capability}`, windowMs: 60_000, limit: limits.tenantPer60s }],
            ["tenant-3600s", 3600, { key: `t3600:${principal.orgId}:${capability}`, windowMs: 3_600_000, limit: limits.tenantPer3600s }]
          ]
          if (limits.keyPerMinute !== null) {
            specs.unshift(["key", 60, { key: `k60:${principal.keyId}`, windowMs: 60_000, limit: limits.keyPerMinute }])
          }
          // One operation (one Redis round trip): the monthly quota is checked first, so a refused call does not use
          // up a rate-window slot.
          const now = new Date()
          const quota = limits.monthlyTokens === null
            ? undefined
            : { orgId: principal.orgId, capability, month: monthKey(now), limit: limits.monthlyTokens }
          const counted = yield* counters.admit({ quota, windows: specs.map(([, , s]) => s) })
          const reset = secondsUntilNextMonth(now)
          const quotaHeaders = quota === undefined ? undefined : {
            policy: `"tenant-month";q=${quota.limit};w=2592000`,
            state: `"tenant-month";r=${Math.max(0, quota.limit - counted.used)};t=${reset}`
          }
          if (counted._tag === "QuotaExceeded") {
            // Only a call with a quota can be refused for it, so `quota` and `quotaHeaders` are set.
            return yield* new ApiError({
              status: 429,
              code: "quota_exceeded",
              message: `The monthly token quota for ${capability} (${quota!.limit} tokens) is used up; it resets at the start of next month (UTC).`,
              extra: { quota_tokens: quota!.limit, used_tokens: counted.used },
              headers: { "ratelimit-policy": quotaHeaders!.policy, ratelimit: quotaHeaders!.state, "retry-after": String(reset) }
            })
          }
          const verdicts = counted.windows
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
