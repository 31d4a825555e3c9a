import { formatUsd, tryParseUsd } from "./money.ts"

/** Default bounds of one top-up (TOPUP_MIN_USD / TOPUP_MAX_USD override them). */
export const DEFAULT_TOPUP_MIN_MICROS = 5_000_000n
export const DEFAULT_TOPUP_MAX_MICROS = 10_000_000_000n

/** Card processors charge whole cents, so a top-up is a decimal string with at most two decimals. */
const CENTS_ONLY = /^\d+(?:\.\d{1,2})?$/

export type TopupAmount = { readonly ok: true; readonly micros: bigint } | { readonly ok: false; readonly message: string }

/** Validates `amount_usd` of a top-up request: a decimal string of whole cents within [min, max]. */
export const parseTopupAmount = (value: unknown, min: bigint, max: bigint): TopupAmount => {
  if (typeof value !== "string") return { ok: false, message: "amount_usd must be a decimal string such as \"10.00\"." }
  const micros = CENTS_ONLY.test(value) ? tryParseUsd(value) : undefined
  if (micros === undefined) return { ok: false, message: "amount_usd must be a decimal string with at most two decimals, such as \"10.00\"." }
  if (micros < min || micros > max) {
    return { ok: false, message: `amount_usd must be between ${formatUsd(min)} and ${formatUsd(max)}.` }
  }
  return { ok: true, micros }
}

/** Micro-USD to whole cents (top-ups are whole cents by construction). */
export const microsToCents = (micros: bigint): number => Number(micros / 10_000n)
