/**
 * Rate limits per tier (docs/billing.md). The spec fixes the free tier's 20 requests per minute per key; the
 * per-(tenant, capability) sliding windows at 60 s and 3600 s default as below and are configurable per tier
 * (RATE_LIMITS_JSON) — a tier missing from the override keeps its defaults.
 */
export interface TierLimits {
  /** Requests per minute per key; null = no per-key limit. */
  readonly keyPerMinute: number | null
  readonly tenantPer60s: number
  readonly tenantPer3600s: number
  /** Tokens (input + output) per calendar month (UTC) per (tenant, capability); null = no quota. */
  readonly monthlyTokens: number | null
}

export const DEFAULT_TIER_LIMITS: Readonly<Record<string, TierLimits>> = {
  free: { keyPerMinute: 20, tenantPer60s: 60, tenantPer3600s: 1_000, monthlyTokens: 2_000_000 },
  // Anonymous demo keys (src/keys/demo.ts): a terminal chat's pace; the $2 credit is the budget, so no monthly token
  // quota (for a 24-hour key it would only answer 429 "resets next month" where the spent credit means 402; docs/demo.md).
  demo: { keyPerMinute: 10, tenantPer60s: 10, tenantPer3600s: 200, monthlyTokens: null },
  standard: { keyPerMinute: null, tenantPer60s: 3_000, tenantPer3600s: 100_000, monthlyTokens: null },
  enterprise: { keyPerMinute: null, tenantPer60s: 60_000, tenantPer3600s: 2_000_000, monthlyTokens: null }
}

const isLimit = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v > 0

/**
 * Parses RATE_LIMITS_JSON: `{ "<tier>": { "keyPerMinute": n|null, "tenantPer60s": n, "tenantPer3600s": n,
 * "monthlyTokens": n|null } }`.
 */
export const parseTierLimits = (json: string | undefined): Readonly<Record<string, TierLimits>> => {
  if (json === undefined || json.trim() === "") return DEFAULT_TIER_LIMITS
  const raw = JSON.parse(json) as Record<string, Partial<TierLimits>>
  const out: Record<string, TierLimits> = { ...DEFAULT_TIER_LIMITS }
  for (const [tier, limits] of Object.entries(raw)) {
    const base = out[tier] ?? DEFAULT_TIER_LIMITS.standard
    const merged = { ...base, ...limits }
    if (!(merged.keyPerMinute === null || isLimit(merged.keyPerMinute)) || !isLimit(merged.tenantPer60s) || !isLimit(merged.tenantPer3600s) ||
      !(merged.monthlyTokens === null || isLimit(merged.monthlyTokens))) {
      throw new Error(`RATE_LIMITS_JSON: tier "${tier}" needs positive integer limits`)
    }
    out[tier] = merged
  }
  return out
}

export const limitsForTier = (limits: Readonly<Record<string, TierLimits>>, tier: string): TierLimits =>
  limits[tier] ?? limits.standard ?? DEFAULT_TIER_LIMITS.standard
