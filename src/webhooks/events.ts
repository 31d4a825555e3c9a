// The webhook event catalogue (spec, Events: "Event catalogue") and subscription matching.
// Subscriptions hold exact event names, `*` (everything) or `prefix.*` (one namespace).

export const EVENT_CATALOGUE = [
  "receipt.signed",
  "chain.broken",
  "chain.repaired",
  "user.created",
  "user.deleted",
  "org.member_added",
  "key.created",
  "key.revoked",
  "key.rotated",
  "billing.low_balance",
  "billing.credit_added",
  "billing.invoice_paid",
  "subscriber.bounced",
  "subscriber.unsubscribed",
  "webhook.test"
] as const

export type WebhookEventName = (typeof EVENT_CATALOGUE)[number]

const catalogue: ReadonlySet<string> = new Set(EVENT_CATALOGUE)

/** Namespaces a `prefix.*` subscription may name: the part before the dot of each catalogue event. */
export const EVENT_NAMESPACES: readonly string[] = Object.freeze([
  ...new Set(EVENT_CATALOGUE.map((name) => name.slice(0, name.indexOf("."))))
])

const namespaces: ReadonlySet<string> = new Set(EVENT_NAMESPACES)

export const isCatalogueEvent = (name: string): name is WebhookEventName => catalogue.has(name)

/** True when an endpoint subscribed to `subscribed` should receive `event`. */
export const matchesSubscription = (subscribed: readonly string[], event: string): boolean =>
  subscribed.some(
    (pattern) =>
      pattern === "*" ||
      pattern === event ||
      (pattern.endsWith(".*") && event.startsWith(pattern.slice(0, -1)))
  )

/**
 * The entries of a requested `events` array that are not acceptable; empty means valid.
 * Accepted: catalogue names, `*`, and `<namespace>.*` for a namespace of the catalogue. Unknown
 * names are refused rather than stored, so a typo is reported at once instead of silently never
 * matching (the catalogue lists events before they are fired, so no valid future name is lost).
 */
export const validateSubscription = (events: readonly unknown[]): string[] =>
  events
    .filter((entry) => !isAcceptedPattern(entry))
    .map((entry) => (typeof entry === "string" ? entry : JSON.stringify(entry) ?? String(entry)))

const isAcceptedPattern = (entry: unknown): boolean => {
  if (typeof entry !== "string") return false
  if (entry === "*" || catalogue.has(entry)) return true
  return entry.endsWith(".*") && namespaces.has(entry.slice(0, -2))
}
