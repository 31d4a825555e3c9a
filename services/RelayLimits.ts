import { Context, Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"
import type { SlotRequest } from "./AdmissionCounters.ts"
import type { GatewayPrincipal } from "./Keys.ts"
import type { Hold } from "./Settlement.ts"

export type RelayAdmission =
  /** Admitted: the hold is taken (and the slot, when one was asked for); RateLimit headers for the response. */
  | { readonly _tag: "Admitted"; readonly headers: Readonly<Record<string, string>>; readonly hold: Hold }
  /** The idempotency slot is held by another request, or a response was just stored under it: nothing was taken. */
  | { readonly _tag: "SlotTaken"; readonly done: boolean }

/**
 * Admission of a relay call in ONE operation on the shared state (AdmissionCounters): the idempotency slot, the
 * tenant's monthly token quota, the key's and the tenant's sliding windows, and the wallet hold of the call's
 * maximum cost. Refusal is 429 `quota_exceeded` or `rate_limited` with `Retry-After`, or 402 `insufficient_balance`;
 * a refused call takes nothing. `finish` gives everything back when the call ends (see AdmissionCounters.finish).
 */
export class RelayLimits extends Context.Service<RelayLimits, {
  readonly admit: (
    principal: GatewayPrincipal,
    capability: string,
    ask: { readonly holdMicros: bigint; readonly slot?: SlotRequest }
  ) => Effect.Effect<RelayAdmission, ApiError>
  /**
   * The call ended: its hold goes back, the mirror is debited by `billedMicros` (0 when nothing was billed), its
   * tokens count in the monthly quota, its slot is released (`stored`: a response was stored under it).
   */
  readonly finish: (input: {
    readonly hold: Hold
    readonly capability: string
    readonly billedMicros: bigint
    readonly tokens: number
    readonly slot?: { readonly key: string; readonly owner: string; readonly stored: boolean }
  }) => Effect.Effect<void>
}>()("privacy-relay/RelayLimits") {}
