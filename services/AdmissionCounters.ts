import { Context, Effect } from "effect"
import type { WindowVerdict } from "./RateWindows.ts"

/** A monthly token counter that must be below `limit` for a call to be admitted (see Quotas). */
export interface QuotaGate {
  readonly orgId: string
  readonly capability: string
  /** `YYYY-MM` (UTC), as Quotas counts it. */
  readonly month: string
  readonly limit: number
}

export interface WindowSpec {
  readonly key: string
  readonly windowMs: number
  readonly limit: number
}

export type AdmissionCount =
  /** The quota is used up; no window was touched, so the refusal costs the caller no slot. */
  | { readonly _tag: "QuotaExceeded"; readonly used: number }
  /** The quota (if any) had room; the windows were checked and, when all allowed it, counted (see RateWindows). */
  | { readonly _tag: "Counted"; readonly used: number; readonly windows: ReadonlyArray<WindowVerdict> }

/**
 * Everything a relay call's admission reads and takes from the shared counters, as ONE operation: the monthly
 * quota is read first and, only when it has room, the sliding windows are checked and counted. With Redis this is
 * one script run (one round trip); in memory it is the same two steps in process. Same counters as Quotas (which
 * Settlement adds to) and RateWindows.
 */
export class AdmissionCounters extends Context.Service<AdmissionCounters, {
  readonly admit: (input: {
    readonly quota: QuotaGate | undefined
    readonly windows: ReadonlyArray<WindowSpec>
  }) => Effect.Effect<AdmissionCount>
}>()("privacy-relay/AdmissionCounters") {}
