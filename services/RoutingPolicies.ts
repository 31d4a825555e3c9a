import { Context, type Effect } from "effect"

/**
 * An organisation's routing policy: the ordered fallback models (`model` or `provider/model`) tried, in order,
 * when a relay call's model fails before its first byte (429, 5xx, timeout, unreachable). Empty = no fallback.
 */
export class RoutingPolicies extends Context.Service<RoutingPolicies, {
  readonly fallbacksOf: (orgId: string) => Effect.Effect<ReadonlyArray<string>>
  /** Replaces the organisation's list (an empty list removes the policy). */
  readonly setFallbacks: (orgId: string, fallbacks: ReadonlyArray<string>) => Effect.Effect<void>
}>()("privacy-relay/RoutingPolicies") {}

/** At most this many fallbacks: each costs a provider round trip before the caller hears anything. */
export const MAX_FALLBACKS = 4
