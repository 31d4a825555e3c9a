import { Effect, Layer } from "effect"
import { type AdmissionCount, AdmissionCounters, type WindowSpec } from "../services/AdmissionCounters.ts"
import { AppConfig } from "../services/AppConfig.ts"
import { OrgLimits } from "../services/OrgLimits.ts"
import { QuotaExceeded, RateLimited, RelayLimits } from "../services/RelayLimits.ts"
import { type Hold, InsufficientBalance } from "../services/Settlement.ts"
import { Wallets } from "../services/Wallets.ts"
import type { WindowVerdict } from "../services/RateWindows.ts"
import { limitsForTier } from "../src/billing/limits.ts"
import { monthKey, secondsUntilNextMonth } from "../src/billing/month.ts"

/** IETF httpapi RateLimit headers (draft-ietf-httpapi-ratelimit-headers): one policy item per window. */
const rateLimitHeaders = (named: ReadonlyArray<readonly [string, number, WindowVerdict]>) => ({
  "ratelimit-policy": named.map(([name, w, v]) => `"${name}";q=${v.limit};w=${w}`).join(", "),
  ratelimit: named
    .map(([name, _w, v]) => `"${name}";r=${Math.max(0, v.limit - v.count)};t=${Math.ceil(v.resetMs / 1000)}`)
    .join(", ")
})

/** A hold lives at most this long; a call that never finishes (its node died) has its hold returned then. */
const HOLD_TTL_MS = 15 * 60_000
/** Re-reads of the mirror one admission may make (each races at most one debit) before it refuses. */
const MAX_SEEDS = 4

export const RelayLimitsLive = Layer.effect(
  RelayLimits,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const counters = yield* AdmissionCounters
    const tiers = config.settings.rateLimits
    const orgLimits = yield* OrgLimits
    const wallets = yield* Wallets
    /**
     * WALLET_MIRROR_TTL_MS (default 10 s): how long the wallet mirror is trusted before it is read from PostgreSQL
     * again, the bound on how long a change made behind the gateways' back (SQL by hand, a debit whose node died
     * before telling the mirror) goes unseen. A refusal always re-reads it first, so a top-up counts at once.
     */
    const MIRROR_TTL_MS = config.settings.walletMirrorTtlMs
    /** The balance as PostgreSQL has it now; an organisation without a wallet has nothing to spend. */
    const balanceOf = (orgId: string) => wallets.balance(orgId).pipe(Effect.catchTag("OrganisationNotFound", () => Effect.succeed(0n)))
    return RelayLimits.of({
      finish: ({ hold, capability, billedMicros, tokens, slot, uncount }) =>
        counters.finish({
          hold: { orgId: hold.orgId, id: hold.id, debitMicros: billedMicros },
          quota: tokens > 0 ? { orgId: hold.orgId, capability, month: monthKey(new Date()), tokens } : undefined,
          slot,
          uncount
        }),
      admit: (principal, capability, ask) =>
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
          const hold: Hold = { id: `hold_${crypto.randomUUID().replaceAll("-", "")}`, orgId: principal.orgId, amountMicros: ask.holdMicros }
          const admit = counters.admit({
            quota,
            windows: specs.map(([, , s]) => s),
            hold: { orgId: hold.orgId, id: hold.id, amountMicros: hold.amountMicros, ttlMs: HOLD_TTL_MS },
            slot: ask.slot
          })
          // The wallet mirror is loaded when missing, and re-read once before a refusal (a top-up since it was read).
          let counted: AdmissionCount = yield* admit
          for (let seeds = 0; counted._tag === "Counted" && seeds < MAX_SEEDS; seeds++) {
            if (counted.hold === "granted" || (counted.hold === "insufficient" && seeds > 0)) break
            const balanceMicros = yield* balanceOf(principal.orgId)
            yield* counters.seedBalance({ orgId: principal.orgId, generation: counted.generation, balanceMicros, ttlMs: MIRROR_TTL_MS })
            counted = yield* admit
          }
          if (counted._tag === "SlotTaken") return counted
          const reset = secondsUntilNextMonth(now)
          const quotaHeaders = quota === undefined ? undefined : {
            policy: `"tenant-month";q=${quota.limit};w=2592000`,
            state: `"tenant-month";r=${Math.max(0, quota.limit - counted.used)};t=${reset}`
          }
          if (counted._tag === "QuotaExceeded") {
            // Only a call with a quota can be refused for it, so `quota` and `quotaHeaders` are set.
            return yield* new QuotaExceeded({
              capability,
              quotaTokens: quota!.limit,
              usedTokens: counted.used,
              retryAfterSeconds: reset,
              rateLimit: { "ratelimit-policy": quotaHeaders!.policy, ratelimit: quotaHeaders!.state }
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
            return yield* new RateLimited({ windows: full, retryAfterSeconds: retryAfter, rateLimit: headers })
          }
          if (counted.hold !== "granted") return yield* new InsufficientBalance()
          return { _tag: "Admitted", headers, hold, entry: counted.entry } as const
        })
    })
  })
)
