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
