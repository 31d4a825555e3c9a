/**
 * Content-blind cost routing (issue 3 item 6, docs/routing.md). Pure: it sees metadata only (the requested model
 * id, the route, the body's byte size, `max_tokens`, which providers this organisation can use and at what key
 * mode) and never the body's content.
 *
 * Equivalence is strict: the candidates are the providers serving the SAME model id the client asked for. The
 * relayed body must stay byte-for-byte what the client attested (its JCS hash is `egress_sha256` and the receipt's
 * `hash_upstream_request`), so the `model` field inside it cannot be rewritten; only the provider can change.
 */
import { billCall, DEFAULT_HOLD_OUTPUT_TOKENS, type KeyMode } from "../billing/pricing.ts"
import type { RoutingStrategy } from "./strategy.ts"

/** The classifier id written into `routing_decision.classifier`: metadata-only features, version 1. */
export const ROUTING_CLASSIFIER = "metadata-v1"

/** Bytes per input token assumed for the estimate (the usage estimate's ratio; the same for every candidate). */
export const ROUTING_BYTES_PER_TOKEN = 4

export interface RoutingCandidate {
  /** Provider slug. */
  readonly provider: string
  readonly inputUsdPerMTok: string
  readonly outputUsdPerMTok: string
  /** The key the call would use there: the organisation's own (byok, 5%) or the gateway's (pooled, 15%). */
  readonly keyMode: KeyMode
  /** False when the provider cannot be called for this organisation (no key, no base URL, outside the allowlist). */
  readonly available: boolean
}

export interface RoutingInput {
  readonly strategy: RoutingStrategy
  /** The model id the client asked for (and that stays in the body). */
  readonly model: string
  /** The provider the request resolved to without routing. */
  readonly current: RoutingCandidate
  /** Every provider serving this model id on this route, in catalogue order (may include `current`). */
  readonly candidates: ReadonlyArray<RoutingCandidate>
  readonly bodyBytes: number
  /** `max_tokens` (or the route's equivalent); the hold's default when absent. 0 for embeddings. */
  readonly maxOutputTokens: number | undefined
}

export interface RoutingDecision {
  /** Provider slug the request resolved to. */
  readonly from: string
  /** Provider slug the call goes to (equal to `from` when nothing cheaper was available). */
  readonly to: string
  readonly chosen_model: string
  readonly classifier: string
  /** How much cheaper the estimated billed price is, in percent, rounded down to 0.01. 0 when not re-routed. */
  readonly savings_pct: number
  /** `cost` (the router moved the call) or `fallback` (the requested provider failed before its first byte). */
  readonly strategy: RoutingStrategy | "fallback"
  /** Which of the provider's pooled keys served the call (`key 2 of 3`), when it has several. Never the key. */
  readonly key_slot?: string
}

/** The estimated billed price (micro-USD, what the wallet would be debited) of this call at a candidate. */
export const estimatedBilledMicros = (
  candidate: RoutingCandidate,
  bodyBytes: number,
  maxOutputTokens: number | undefined
): bigint =>
  billCall({
    inputTokens: Math.ceil(Math.max(0, bodyBytes) / ROUTING_BYTES_PER_TOKEN),
    outputTokens: maxOutputTokens ?? DEFAULT_HOLD_OUTPUT_TOKENS,
    inputUsdPerMTok: candidate.inputUsdPerMTok,
    outputUsdPerMTok: candidate.outputUsdPerMTok,
    keyMode: candidate.keyMode
  }).billedMicros

/**
 * Picks the provider for a call. With strategy `cost`: the available candidate with the lowest estimated billed
 * price, if strictly lower than the current one's (ties keep the current provider; among equally cheap
 * alternatives the first in catalogue order wins). Never a more expensive provider, never an unavailable one.
 */
export const decideRoute = (input: RoutingInput): { readonly chosen: RoutingCandidate; readonly decision: RoutingDecision } => {
  const price = (c: RoutingCandidate) => estimatedBilledMicros(c, input.bodyBytes, input.maxOutputTokens)
  const currentPrice = price(input.current)
  let chosen = input.current
  let chosenPrice = currentPrice
  for (const candidate of input.candidates) {
    if (!candidate.available || candidate.provider === input.current.provider) continue
    const p = price(candidate)
    if (p < chosenPrice) {
      chosen = candidate
      chosenPrice = p
    }
  }
  const savingsPct = currentPrice > 0n && chosenPrice < currentPrice
    ? Number(((currentPrice - chosenPrice) * 10_000n) / currentPrice) / 100
    : 0
  return {
    chosen,
    decision: {
      from: input.current.provider,
      to: chosen.provider,
      chosen_model: input.model,
      classifier: ROUTING_CLASSIFIER,
      savings_pct: savingsPct,
      strategy: input.strategy
    }
  }
}
