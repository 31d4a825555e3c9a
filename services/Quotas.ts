import { Context, Effect } from "effect"

/**
 * Monthly token counters per (tenant, capability), keyed by UTC month and expiring after it: Redis (shared by
 * every node) or memory (one process). Counted after settlement, so a call admitted under its quota may take the
 * counter past it; the next call is then refused with 429 `quota_exceeded`.
 */
export class Quotas extends Context.Service<Quotas, {
  /** Relay admission reads the counter through AdmissionCounters, in the same step as the rate windows. */
  readonly used: (orgId: string, capability: string, month: string) => Effect.Effect<number>
  readonly add: (orgId: string, capability: string, month: string, tokens: number) => Effect.Effect<void>
}>()("privacy-relay/Quotas") {}

export const quotaKey = (orgId: string, capability: string, month: string) => `quota:${orgId}:${capability}:${month}`
