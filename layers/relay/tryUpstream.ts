/**
 * The upstream step of a relay call: each candidate in order until one answers. A 429, a 5xx, a timeout or an
 * unreachable provider before any byte moves on to the next; any other answer (a 2xx, or a 4xx the request itself
 * caused) ends the search. Nothing has reached the client yet, so moving on is safe.
 */
import { Effect, Result } from "effect"
import type { RouteTarget } from "../../services/ProviderRouter.ts"
import type { RequestInfo } from "../../services/RequestContext.ts"
import type { ApiError } from "../../src/http/ApiError.ts"
import { formatTraceparent } from "../../src/http/traceparent.ts"
import { keySlotLabel } from "../../src/providers/keyFile.ts"
import { allAttemptsFailed, fallbackDecision, isRetryableStatus, type UpstreamAttempt } from "./fallback.ts"
import type { KeyRotation } from "./keyRotation.ts"
import type { PreparedRequest } from "./preparedRequest.ts"
import type { ProviderHealth } from "./providerHealth.ts"
import { signedHeaders } from "./signedRequest.ts"
import { spanIf } from "./spanIf.ts"
import { upstreamError } from "./upstreamBody.ts"
import { postUpstream, type UpstreamResponse } from "./UpstreamClient.ts"

/** Headers from the client that an upstream provider legitimately needs; nothing else is passed on. */
const PASS_THROUGH = ["anthropic-beta"] as const

/** The candidate that answered, its answer (headers read, body not yet), and the target its receipts seal. */
export interface UpstreamAnswer {
  readonly prepared: PreparedRequest
  readonly upstream: UpstreamResponse
  readonly used: RouteTarget
}

/**
 * The target that answered, with the routing decision its receipts seal: a fallback model is recorded as one; a
 * provider with several pooled keys records the key slot (`key 2 of 3`) whenever there is a decision, and a retry
 * on another key of the requested provider is a fallback decision from the provider to itself.
 */
const usedTarget = (requested: RouteTarget, answered: RouteTarget, retried: boolean): RouteTarget => {
  const sameModel = answered.provider.slug === requested.provider.slug && answered.model.id === requested.model.id
  const decision = !sameModel || (retried && answered.keySlot !== undefined)
    ? fallbackDecision(requested, answered)
    : requested.routingDecision
  if (answered.keySlot === undefined || decision === undefined) return { ...answered, routingDecision: decision }
  return { ...answered, routingDecision: { ...decision, key_slot: keySlotLabel(answered.keySlot) } }
}

/**
 * Sends to `candidates` in order. Fails with the provider's own error when there was one candidate or the request
 * itself was refused, else with all_attempts_failed; a failed key or provider cools down (settings.keys/health).
 */
export const tryUpstream = (input: {
  readonly requested: RouteTarget
  readonly candidates: ReadonlyArray<PreparedRequest>
  readonly stream: boolean
  readonly clientHeaders: Readonly<Record<string, string | undefined>>
  readonly ctx: RequestInfo
  readonly health: ProviderHealth
  readonly keys: KeyRotation
}): Effect.Effect<UpstreamAnswer, ApiError> =>
  Effect.gen(function*() {
    const { candidates, ctx } = input
    const headersFor = (t: RouteTarget): Record<string, string> => {
      const headers: Record<string, string> = {
        ...t.authHeaders,
        "content-type": "application/json",
        accept: input.stream ? t.endpoint.streamAccept ?? "text/event-stream" : "application/json",
        "x-request-id": ctx.requestId,
        traceparent: formatTraceparent(ctx.traceId, ctx.spanId, ctx.sampled)
      }
      for (const name of PASS_THROUGH) {
        const v = input.clientHeaders[name]
        if (v !== undefined) headers[name] = v
      }
      return headers
    }
    const attempts: Array<UpstreamAttempt> = []
    let lastError: ApiError | undefined
    for (const [i, prepared] of candidates.entries()) {
      const t = prepared.target
      const keySlot = t.keySlot === undefined ? {} : { key_slot: keySlotLabel(t.keySlot) }
      // A failed key cools down on its own; the provider only when none of its keys tried in this call answered
      // (the next candidate is another provider or model), so provider health keeps its meaning.
      const failed = () => {
        if (t.keySlot !== undefined) input.keys.markFailed(t.provider.slug, t.keySlot.index)
        if (candidates[i + 1]?.target.provider.slug !== t.provider.slug) input.health.markFailed(t.provider.slug)
      }
      const sent = yield* Effect.result(postUpstream({
        provider: t.provider.slug,
        url: prepared.url,
        headers: t.sign === undefined ? headersFor(t) : yield* signedHeaders(t.sign, prepared, headersFor(t)),
        body: prepared.body,
        timeoutMs: t.timeoutMs
      }).pipe(spanIf(ctx.sampled, "relay.upstream.headers", { provider: t.provider.slug, model: t.model.id })))
      if (Result.isFailure(sent)) {
        lastError = sent.failure
        attempts.push({ provider: t.provider.slug, model: t.model.id, provider_status: null, error: sent.failure.code, ...keySlot })
        failed()
        continue
      }
      const upstream = sent.success
      if (upstream.status >= 400) {
        const error = yield* Effect.promise(() => upstreamError(t, upstream)).pipe(Effect.ensuring(Effect.sync(upstream.done)))
        lastError = error
        attempts.push({ provider: t.provider.slug, model: t.model.id, provider_status: upstream.status, error: error.code, ...keySlot })
        if (!isRetryableStatus(upstream.status)) break
        failed()
        continue
      }
      if (t.keySlot !== undefined) input.keys.markHealthy(t.provider.slug, t.keySlot.index)
      input.health.markHealthy(t.provider.slug)
      ctx.stages.end("upstream")
      return { prepared, upstream, used: usedTarget(input.requested, prepared.target, attempts.length > 0) }
    }
    ctx.stages.end("upstream")
    // One candidate, or a refusal the request itself caused: the provider's own error, as without fallbacks.
    const last = attempts[attempts.length - 1]
    if (attempts.length === 1 || (last?.provider_status !== null && last !== undefined && !isRetryableStatus(last.provider_status))) {
      return yield* lastError!
    }
    return yield* allAttemptsFailed(attempts)
  })
