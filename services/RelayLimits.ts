import { Context, Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"
import type { GatewayPrincipal } from "./Keys.ts"

/**
 * Admission of a relay call against the tenant's monthly token quota, then the key's and the tenant's sliding
 * windows (one AdmissionCounters operation). Success carries the `RateLimit-Policy` / `RateLimit` headers for the
 * response; refusal is 429 `quota_exceeded` or `rate_limited`, with `Retry-After`.
 */
export class RelayLimits extends Context.Service<RelayLimits, {
  readonly admit: (principal: GatewayPrincipal, capability: string) => Effect.Effect<Readonly<Record<string, string>>, ApiError>
}>()("privacy-relay/RelayLimits") {}
