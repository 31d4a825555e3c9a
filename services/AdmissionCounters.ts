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

/**
 * A wallet hold taken at admission: the call's maximum cost, reserved against the balance mirror while the
 * available amount (mirrored balance minus open holds) is positive. It lives until `finish` releases it or its TTL
 * passes (a node that died mid-call), whichever comes first.
 */
export interface HoldRequest {
  readonly orgId: string
  readonly id: string
  readonly amountMicros: bigint
  readonly ttlMs: number
}

/** An idempotent call's in-flight slot, taken together with everything else (or not at all). */
export interface SlotRequest {
  readonly key: string
  readonly owner: string
  readonly ttlMs: number
}

export type AdmissionCount =
  /**
   * The idempotency slot is held by another request (`done` false), or a response was stored under it since this
   * request looked for one (`done` true). Nothing was read or taken.
   */
  | { readonly _tag: "SlotTaken"; readonly done: boolean }
  /** The quota is used up; no window was touched, so the refusal costs the caller no slot. */
  | { readonly _tag: "QuotaExceeded"; readonly used: number }
  /**
   * The quota (if any) had room; the windows were checked and, when all allowed it and the hold (if any) was
   * granted, counted (see RateWindows). `hold`: "granted" (taken, or none asked), "insufficient" (the mirrored
   * available balance is not positive), "unknown" (no mirror of this wallet: load it with `seedBalance`, then ask
   * again). Only a call that is admitted in full counts in the windows, holds money and takes the slot.
   */
  | {
    readonly _tag: "Counted"
    readonly used: number
    readonly windows: ReadonlyArray<WindowVerdict>
    readonly hold: "granted" | "insufficient" | "unknown"
    /** The wallet mirror's generation, for `seedBalance` (see there). */
    readonly generation: string
    /** This admission's entry in the windows (when it counted there), for `finish`'s `uncount`. */
    readonly entry: WindowEntry
  }

/**
 * One admission's entry in its sliding windows: the windows' keys and what identifies the entry in them (the Redis
 * script's member, or the in-process log's timestamp).
 */
export interface WindowEntry {
  readonly keys: ReadonlyArray<string>
  readonly id: string
}

/** What a call gives back when it ends, in one operation: the hold, its debit, its tokens, its slot. */
export interface AdmissionFinish {
  readonly hold?: { readonly orgId: string; readonly id: string; readonly debitMicros: bigint }
  readonly quota?: { readonly orgId: string; readonly capability: string; readonly month: string; readonly tokens: number }
  /** `stored`: the response was stored under the key (the settlement did): later look-ups must find it. */
  readonly slot?: { readonly key: string; readonly owner: string; readonly stored: boolean }
  /**
   * The admission's window entry taken out again: the call turned out to be a replay (or a key conflict) after it
   * was admitted, so it counts in no window, like a replay found before admission.
   */
  readonly uncount?: WindowEntry
}

/**
 * Everything a relay call's admission reads and takes from the shared state, as ONE operation (one Redis round trip,
 * or one synchronous step in memory): the idempotency slot, the monthly quota, the sliding windows and the wallet
 * hold. PostgreSQL stays the truth for money: the balance here is a mirror loaded from it (`seedBalance`) that
 * expires after a few seconds, is debited by `finish` after each settlement commits, and is re-read whenever it
 * would refuse a call (so a top-up counts at once). The mirror can only lag in the safe direction: a settlement's
 * debit reaches it after its commit while the call's hold (at least the debit) still counts, and a load that raced
 * a debit is refused by the generation check. Same counters as Quotas and RateWindows.
 */
export class AdmissionCounters extends Context.Service<AdmissionCounters, {
  readonly admit: (input: {
    readonly quota: QuotaGate | undefined
    readonly windows: ReadonlyArray<WindowSpec>
    readonly hold?: HoldRequest
    readonly slot?: SlotRequest
  }) => Effect.Effect<AdmissionCount>
  /**
   * Sets the wallet mirror to `balanceMicros` (read from PostgreSQL AFTER `admit` reported `generation`) for `ttlMs`,
   * unless a debit reached the mirror since (the generation moved): then the read may predate that debit, and
   * false is answered (read again).
   */
  readonly seedBalance: (input: {
    readonly orgId: string
    readonly generation: string
    readonly balanceMicros: bigint
    readonly ttlMs: number
  }) => Effect.Effect<boolean>
  /**
   * Releases the hold and debits the mirror by what was billed (after the settlement committed), adds the tokens to
   * the monthly quota, and releases the slot (marking it done when a response was stored). Issued in order with
   * later operations of this process, so a call that starts after this one answered sees its effects.
   */
  readonly finish: (input: AdmissionFinish) => Effect.Effect<void>
  /** Holds taken and neither finished nor expired (every node's, with Redis): the open-holds metrics gauge. */
  readonly openHolds: Effect.Effect<number>
}>()("privacy-relay/AdmissionCounters") {}

/** How long a stored response's `done` mark outlives the slot: longer than any gap between a look-up and admission. */
export const DONE_MARK_TTL_MS = 120_000
