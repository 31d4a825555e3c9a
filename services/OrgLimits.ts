import { Context, Effect } from "effect"

/** Per-organisation overrides of the tier's limits; undefined fields keep the tier default. */
export interface LimitOverride {
  readonly monthlyTokens?: number
  readonly per60?: number
  readonly per3600?: number
}

/**
 * Rows of `org_limits`: an organisation's overrides for one capability, or for every capability (`*`). A
 * capability's own row wins over `*` field by field.
 */
export class OrgLimits extends Context.Service<OrgLimits, {
  readonly forOrg: (orgId: string, capability: string) => Effect.Effect<LimitOverride>
  readonly set: (orgId: string, capability: string, override: { readonly monthlyTokens: number | null; readonly per60: number | null; readonly per3600: number | null }) =>
    Effect.Effect<void>
}>()("privacy-relay/OrgLimits") {}
