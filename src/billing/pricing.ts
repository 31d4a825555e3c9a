/**
 * Pricing of one relay call: upstream cost from token counts and per-million-token list prices,
 * then the gateway's markup (spec: 15% on pooled provider keys, 5% on bring-your-own-key).
 *
 * Rounding rule (DESIGN "Money"): billed = upstream cost x (1 + markup), rounded UP to the micro-dollar.
 * All arithmetic is exact bigint rational arithmetic; there is exactly one rounding step per
 * reported amount, each taken from the exact (unrounded) cost:
 *   exact cost (pico-USD)  = inputTokens x inputPriceMicrosPerMTok + outputTokens x outputPriceMicrosPerMTok
 *                            (a price of p micro-USD per 1e6 tokens is p pico-USD per token)
 *   upstreamCostMicros     = ceil(exact / 1e6)
 *   billedMicros           = ceil(exact x (10_000 + markupBps) / (1e6 x 10_000))
 *   markupMicros           = billedMicros - upstreamCostMicros
 * Billing from the exact cost (not from the already-rounded upstream cost) avoids double rounding:
 * a call costing 0.1 micros upstream is billed ceil(0.115) = 1 micro, not ceil(1 x 1.15) = 2.
 * Consequences: billed >= upstream cost, billed is monotonic in both token counts, BYOK billed <= pooled
 * billed, and a tiny call's markup can round to 0 micros (never negative).
 */
import { parseUsd } from "./money.ts"

export type KeyMode = "pooled" | "byok"

/** Markup in basis points (1 bp = 0.01%). Spec, Limits table: 15% pooled; 5% BYOK. */
export const MARKUP_BPS: { readonly [K in KeyMode]: bigint } = { pooled: 1500n, byok: 500n }

/** The same markup as whole percent, for display and receipts. */
export const MARKUP_PCT: { readonly [K in KeyMode]: number } = { pooled: 15, byok: 5 }

const BPS_DENOMINATOR = 10_000n
const PICO_PER_MICRO = 1_000_000n

/** Default output-token cap assumed for a hold when the request names no `max_tokens`. */
export const DEFAULT_HOLD_OUTPUT_TOKENS = 4096

/** Bytes of request body assumed per input token when estimating a hold (conservative: English averages ~4). */
export const HOLD_BYTES_PER_INPUT_TOKEN = 3

/** List prices of a model, as decimal USD strings per million tokens (the catalogue's shape). */
export interface ModelPrices {
  readonly inputUsdPerMTok: string
  readonly outputUsdPerMTok: string
}

/** Token counts as reported by the upstream (JSON numbers) or already as bigint. */
export type TokenCount = number | bigint

export interface CallUsage extends ModelPrices {
  readonly inputTokens: TokenCount
  readonly outputTokens: TokenCount
}

export interface BilledCall {
  /** Upstream list cost, rounded up to the micro-dollar. */
  readonly upstreamCostMicros: bigint
  /** What the wallet is debited: exact cost x (1 + markup), rounded up to the micro-dollar. */
  readonly billedMicros: bigint
  /** billedMicros - upstreamCostMicros (>= 0). */
  readonly markupMicros: bigint
  readonly markupPct: number
  readonly markupBps: bigint
}

const toTokenCount = (name: string, value: TokenCount): bigint => {
  if (typeof value === "bigint") {
    if (value < 0n) throw new RangeError(`${name} must be >= 0, got ${value}`)
    return value
  }
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`)
  }
  return BigInt(value)
}

const ceilDiv = (numerator: bigint, denominator: bigint): bigint =>
  // Callers only pass non-negative numerators and positive denominators.
  (numerator + denominator - 1n) / denominator

/** Exact upstream cost in pico-USD (1e-12 USD): no rounding has happened yet. */
export const upstreamCostPicoUsd = (usage: CallUsage): bigint =>
  toTokenCount("inputTokens", usage.inputTokens) * parseUsd(usage.inputUsdPerMTok) +
  toTokenCount("outputTokens", usage.outputTokens) * parseUsd(usage.outputUsdPerMTok)

/** Upstream list cost of a call in micro-USD, rounded up. */
export const upstreamCostMicros = (usage: CallUsage): bigint =>
  ceilDiv(upstreamCostPicoUsd(usage), PICO_PER_MICRO)

/** Billed amount for an exact pico-USD cost under a key mode, rounded up to the micro-dollar. */
export const billedMicrosFromPico = (exactPicoUsd: bigint, keyMode: KeyMode): bigint =>
  ceilDiv(exactPicoUsd * (BPS_DENOMINATOR + MARKUP_BPS[keyMode]), PICO_PER_MICRO * BPS_DENOMINATOR)

/** Prices one completed call: upstream cost, billed amount and the markup between them. */
export const billCall = (call: CallUsage & { readonly keyMode: KeyMode }): BilledCall => {
  const exact = upstreamCostPicoUsd(call)
  const upstream = ceilDiv(exact, PICO_PER_MICRO)
  const billed = billedMicrosFromPico(exact, call.keyMode)
  return {
    upstreamCostMicros: upstream,
    billedMicros: billed,
    markupMicros: billed - upstream,
    markupPct: MARKUP_PCT[call.keyMode],
    markupBps: MARKUP_BPS[call.keyMode]
  }
}

/** Input tokens assumed for a hold: request body bytes / 3, rounded up. */
export const estimateInputTokensFromBytes = (bodyBytes: number): bigint =>
  ceilDiv(toTokenCount("bodyBytes", bodyBytes), BigInt(HOLD_BYTES_PER_INPUT_TOKEN))

export interface HoldEstimate extends ModelPrices {
  /** Byte length of the request body that will be relayed. */
  readonly bodyBytes: number
  /**
   * The request's output cap (`max_tokens` / `max_completion_tokens`); `undefined` means the
   * request names none and DEFAULT_HOLD_OUTPUT_TOKENS is assumed. Embeddings pass 0.
   */
  readonly maxOutputTokens?: number | undefined
  readonly keyMode: KeyMode
}

/**
 * Billed amount to pre-authorise (hold) on a wallet before relaying, so that concurrent calls
 * cannot together spend more than the balance. It is an estimate, not a bound: the settled amount
 * uses the upstream's reported usage and can differ either way (token density above 1 per 3 bytes
 * is possible), so settlement must debit the actual billed amount, not the hold.
 */
export const maxCostHoldMicros = (estimate: HoldEstimate): bigint =>
  billCall({
    inputTokens: estimateInputTokensFromBytes(estimate.bodyBytes),
    outputTokens: estimate.maxOutputTokens ?? DEFAULT_HOLD_OUTPUT_TOKENS,
    inputUsdPerMTok: estimate.inputUsdPerMTok,
    outputUsdPerMTok: estimate.outputUsdPerMTok,
    keyMode: estimate.keyMode
  }).billedMicros
