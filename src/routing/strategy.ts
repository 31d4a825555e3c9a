/**
 * The routing strategy a caller asks for with `X-Service-Routing` (docs/routing.md). Routing is off unless asked:
 * absent, empty or `off` means the requested provider is used as resolved.
 */
export type RoutingStrategy = "cost"

export const ROUTING_HEADER = "x-service-routing"
export const ROUTING_DECISION_HEADER = "x-service-routing-decision"

export const ROUTING_STRATEGIES: ReadonlyArray<RoutingStrategy> = ["cost"]

/** `undefined` = routing off; `{ invalid }` = a value we do not know (the caller gets 400 rather than a silent no-op). */
export const parseRoutingStrategy = (header: string | undefined): RoutingStrategy | undefined | { readonly invalid: string } => {
  const value = header?.trim().toLowerCase()
  if (value === undefined || value === "" || value === "off") return undefined
  if ((ROUTING_STRATEGIES as ReadonlyArray<string>).includes(value)) return value as RoutingStrategy
  return { invalid: value }
}
