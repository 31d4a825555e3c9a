import type { RouteTarget } from "../../services/ProviderRouter.ts"
import { ApiError } from "../../src/http/ApiError.ts"
import type { RoutingDecision } from "../../src/routing/costRouter.ts"
import type { PreparedRequest } from "./preparedRequest.ts"
import type { KeyRotation } from "./keyRotation.ts"
import type { ProviderHealth } from "./providerHealth.ts"

/** One provider tried before the first byte, as the caller sees it in a 502: no provider message, no content. */
export interface UpstreamAttempt {
  readonly provider: string
  readonly model: string
  /** The provider's HTTP status; null when it timed out or could not be reached. */
  readonly provider_status: number | null
  /** The gateway's error code for this attempt (`upstream_error`, `upstream_timeout`). */
  readonly error: string
  /** Which pooled key was tried (`key 2 of 3`), when the provider has several. Never the key. */
  readonly key_slot?: string
}

/** The classifier id of a fallback decision in `routing_decision.classifier`. */
export const FALLBACK_CLASSIFIER = "fallback-v1"

/** Worth trying elsewhere: rate limited or failing upstream. Any other 4xx is the request's own fault. */
export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500

/**
 * The candidates in policy order, those cooling down after a recent failure moved to the end (still tried when
 * nothing else answers). A call without fallbacks is never reordered.
 */
export const orderByHealth = (candidates: ReadonlyArray<PreparedRequest>, health: ProviderHealth): ReadonlyArray<PreparedRequest> => {
  if (candidates.length < 2) return candidates
  const healthy = candidates.filter((c) => !health.isCoolingDown(c.target.provider.slug))
  const cooling = candidates.filter((c) => health.isCoolingDown(c.target.provider.slug))
  return [...healthy, ...cooling]
}

/**
 * A candidate expanded into one request per pooled key to try, in the rotation's order (docs/providers.md): a
 * failing key is retried on the provider's next healthy key before the next fallback. Other candidates unchanged.
 */
export const expandPooledKeys = (prepared: PreparedRequest, keys: KeyRotation, stream: boolean): ReadonlyArray<PreparedRequest> => {
  const keyTargets = prepared.target.keyTargets
  if (keyTargets === undefined) return [prepared]
  const decision = prepared.target.routingDecision
  return keys.order(prepared.target.provider.slug, keyTargets.length).map((slot) => {
    const t = keyTargets[slot]!
    return {
      ...prepared,
      target: decision === undefined ? t : { ...t, routingDecision: decision },
      url: stream ? t.streamUrl : t.url
    }
  })
}

/** Sealed into the receipts and echoed in X-Service-Routing-Decision when a fallback answered. */
export const fallbackDecision = (requested: RouteTarget, used: RouteTarget): RoutingDecision => ({
  from: requested.provider.slug,
  to: used.provider.slug,
  chosen_model: used.model.id,
  classifier: FALLBACK_CLASSIFIER,
  savings_pct: 0,
  strategy: "fallback"
})

export const allAttemptsFailed = (attempts: ReadonlyArray<UpstreamAttempt>) =>
  new ApiError({
    status: 502,
    code: "upstream_error",
    message: `Every provider tried failed before answering (${attempts.length} attempts).`,
    extra: { attempts }
  })
