/**
 * Money as integer micro-USD (1 USD = 1_000_000 micros) held in `bigint`.
 *
 * Why: floats cannot represent most decimal prices exactly (0.1 + 0.2 !== 0.3), and a ledger that
 * drifts by a fraction of a cent per call is wrong after a million calls. Every amount the gateway
 * stores, compares or signs is a bigint of micros; decimal strings exist only at the edges
 * (configuration, the price catalogue, `*_usd` fields in responses).
 */

export const MICROS_PER_USD = 1_000_000n

/** Digits after the decimal point that a micro-USD amount can carry exactly. */
export const USD_DECIMALS = 6

/** Thrown when a string is not a non-negative decimal USD amount representable in micros. */
export class InvalidUsdAmount extends Error {
  readonly input: string
  constructor(input: string, reason: string) {
    super(`invalid USD amount ${JSON.stringify(input)}: ${reason}`)
    this.name = "InvalidUsdAmount"
    this.input = input
  }
}

// Plain decimal only: no sign, no exponent, no thousands separators, no surrounding spaces.
// "1", "1.25", "0.000001", "1.2500000" (trailing zeros beyond 6 decimals are exact, so accepted).
const DECIMAL_USD = /^(\d+)(?:\.(\d+))?$/

/**
 * Parses a non-negative decimal USD string exactly into micros: `parseUsd("1.25") === 1_250_000n`.
 * Rejects negatives, exponents, empty strings and amounts finer than a micro-dollar (rounding a
 * price silently would change what customers are billed).
 */
export const parseUsd = (input: string): bigint => {
  const match = DECIMAL_USD.exec(input)
  if (match === null) {
    throw new InvalidUsdAmount(input, "expected a non-negative decimal such as \"1.25\"")
  }
  const whole = match[1]!
  const fraction = (match[2] ?? "").replace(/0+$/, "")
  if (fraction.length > USD_DECIMALS) {
    throw new InvalidUsdAmount(input, `more than ${USD_DECIMALS} significant decimals (finer than one micro-dollar)`)
  }
  return BigInt(whole) * MICROS_PER_USD + BigInt(fraction.padEnd(USD_DECIMALS, "0"))
}

/** Like `parseUsd`, but answers `undefined` instead of throwing. */
export const tryParseUsd = (input: string): bigint | undefined => {
  try {
    return parseUsd(input)
  } catch {
    return undefined
  }
}

/**
 * Formats micros as a decimal USD string with exactly 6 decimals: `1_250_000n -> "1.250000"`,
 * `-1n -> "-0.000001"`. Negative amounts appear in ledgers (refunds, corrections), so they format too.
 */
export const formatUsd = (micros: bigint): string => {
  const negative = micros < 0n
  const magnitude = negative ? -micros : micros
  const whole = magnitude / MICROS_PER_USD
  const fraction = (magnitude % MICROS_PER_USD).toString().padStart(USD_DECIMALS, "0")
  return `${negative ? "-" : ""}${whole}.${fraction}`
}

/** The `*_usd` field of a response for a `*_micros` field: same as `formatUsd`. */
export const microsToUsdString = formatUsd
