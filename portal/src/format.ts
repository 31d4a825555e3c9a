/** A gateway USD string ("2.000000", 6 decimals) as "$2.00"; sub-cent digits stay when they are there ("$1.999837"). */
export const usd = (text: string | undefined | null) => {
  if (text === undefined || text === null) return "—"
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text)
  if (m === null) return `$${text}`
  const fraction = (m[3] ?? "").replace(/0+$/, "").padEnd(2, "0")
  return `${m[1] === "-" ? "−" : ""}$${m[2]}.${fraction}`
}

export const dateTime = (iso: string | number | null | undefined) => {
  if (iso === null || iso === undefined) return "—"
  const at = typeof iso === "number" ? new Date(iso * 1000) : new Date(iso)
  return Number.isNaN(at.getTime()) ? String(iso) : at.toISOString().replace("T", " ").slice(0, 19) + " UTC"
}

export const count = (n: number) => n.toLocaleString("en-GB")

/** Micro-USD to a dollar string with up to 6 decimals (what the gateway bills in). */
export const microsToUsd = (micros: number) => {
  const negative = micros < 0
  const abs = Math.abs(micros)
  const whole = Math.floor(abs / 1_000_000)
  const fraction = String(abs % 1_000_000).padStart(6, "0").replace(/0+$/, "").padEnd(2, "0")
  return `${negative ? "-" : ""}$${whole}.${fraction}`
}

/** First instant of the current month, UTC. */
export const monthStart = (now = new Date()) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))

/** Micro-USD from a gateway USD string ("1.999925" -> 1999925n); undefined when it is not one. */
const usdToMicros = (text: string): bigint | undefined => {
  const m = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(text)
  if (m === null) return undefined
  const micros = BigInt(m[2]!) * 1_000_000n + BigInt((m[3] ?? "").padEnd(6, "0"))
  return m[1] === "-" ? -micros : micros
}

/**
 * An amount for a headline card, rounded to the cent (half away from zero): 1.999925 -> "$2.00"; an amount under
 * half a cent that is not zero is "<$0.01".
 * The exact amount (what the gateway bills in, six decimals) is `usd()`/`microsToUsd()`: the card's title, the
 * ledger, the usage table and the CSV.
 */
export const centsFromMicros = (micros: number | bigint) => {
  const value = BigInt(micros)
  const negative = value < 0n
  const abs = negative ? -value : value
  const cents = (abs + 5_000n) / 10_000n
  // Not "$0.00" for an amount that is there (a month's spend of a few calls): say it is under a cent.
  if (cents === 0n && abs !== 0n) return negative ? ">−$0.01" : "<$0.01"
  const text = `$${cents / 100n}.${String(cents % 100n).padStart(2, "0")}`
  return negative && cents !== 0n ? `−${text}` : text
}

export const usdCents = (text: string | undefined | null) => {
  if (text === undefined || text === null) return "—"
  const micros = usdToMicros(text)
  return micros === undefined ? `$${text}` : centsFromMicros(micros)
}

/** How a call's model is shown wherever calls are listed: with its provider, as the catalogue pins it ("local-economy/local-chat"). */
export const modelLabel = (provider: string | null | undefined, model: string) => (provider ? `${provider}/${model}` : model)
