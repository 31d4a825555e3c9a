import { Context, Data, type Effect } from "effect"
import type { SlotRequest, WindowEntry } from "./AdmissionCounters.ts"
import type { GatewayPrincipal } from "./Keys.ts"
import type { Hold, InsufficientBalance } from "./Settlement.ts"

export type RelayAdmission =
  /** Admitted: the hold is taken (and the slot, when one was asked for); RateLimit headers for the response. */
  | {
    readonly _tag: "Admitted"
    readonly headers: Readonly<Record<string, string>>
    readonly hold: Hold
    /** Where the call was counted in the windows (for `finish`'s `uncount`). */
    readonly entry: WindowEntry
  }
  /** The idempotency slot is held by another request, or a response was just stored under it: nothing was taken. */
  | { readonly _tag: "SlotTaken"; readonly done: boolean }

/**
 * The IETF RateLimit fields of an admission (draft-ietf-httpapi-ratelimit-headers), `ratelimit-policy` and `ratelimit`:
 * the limits' own description of where the caller stands, sent with an admitted call and with a refusal alike.
 */
export type RateLimitFields = Readonly<Record<string, string>>

/** The tenant's monthly token quota for the capability is used up; it resets at the start of next month (UTC). */
export class QuotaExceeded extends Data.TaggedError("QuotaExceeded")<{
  readonly capability: string
  readonly quotaTokens: number
  readonly usedTokens: number
  /** Until the quota resets. */
  readonly retryAfterSeconds: number
  readonly rateLimit: RateLimitFields
}> {}

/** A sliding window of the key or the tenant is full (`windows` names the full ones). */
export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly windows: ReadonlyArray<string>
  /** Until the fullest window frees a slot, rounded up (0 when it already has). */
  readonly retryAfterSeconds: number
  readonly rateLimit: RateLimitFields
}> {}

/**
 * Admission of a relay call in ONE operation on the shared state (AdmissionCounters): the idempotency slot, the
 * tenant's monthly token quota, the key's and the tenant's sliding windows, and the wallet hold of the call's
 * maximum cost. Refusal is `QuotaExceeded`, `RateLimited` or `InsufficientBalance`;
 * a refused call takes nothing. `finish` gives everything back when the call ends (see AdmissionCounters.finish).
 */
export class RelayLimits extends Context.Service<RelayLimits, {
  readonly admit: (
    principal: GatewayPrincipal,
    capability: string,
    ask: { readonly holdMicros: bigint; readonly slot?: SlotRequest }
  ) => Effect.Effect<RelayAdmission, QuotaExceeded | RateLimited | InsufficientBalance>
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
    /** Takes the call out of the windows it was counted in (see AdmissionFinish.uncount). */
    readonly uncount?: WindowEntry
  }) => Effect.Effect<void>
}>()("privacy-relay/RelayLimits") {}
