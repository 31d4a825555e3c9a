import { Context, Data, type Effect } from "effect"
import type { RelayRoute } from "../src/relay/requestShape.ts"
import type { RenderAnswer, ResponseRecord, StoredResponse } from "./Idempotency.ts"
import type { GatewayPrincipal } from "./Keys.ts"
import type { RouteTarget } from "./ProviderRouter.ts"
import type { UpstreamTranslation } from "../sdks/typescript/src/wire/receipts/envelope-v2.ts"

/** A wallet hold taken before forwarding; released (and replaced by the real debit) at settlement. */
export interface Hold {
  readonly id: string
  readonly orgId: string
  readonly amountMicros: bigint
}

/** The wallet's available balance (balance minus holds) is not positive: no call may be admitted until a top-up. */
export class InsufficientBalance extends Data.TaggedError("InsufficientBalance")<{}> {}

/** Everything metered about one completed (or partially delivered) relay call. */
export interface CompletedCall {
  readonly principal: GatewayPrincipal
  readonly target: RouteTarget
  readonly capability: RelayRoute
  readonly hold: Hold
  readonly requestId: string
  readonly traceId: string
  readonly startedAt: Date
  readonly providerResponseId: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly estimated: boolean
  /** The client went away or the upstream cut the stream: metered from what was delivered, no receipt. */
  readonly partial: boolean
  readonly hashUpstreamRequest: string
  /** Set when the body was translated to the provider's wire format: sealed as the receipt's `extensions.translation`. */
  readonly translation?: UpstreamTranslation
  readonly hashUpstreamResponse: string
  readonly engineVersion: string
  /** The call carried an Idempotency-Key: its response is stored in the settlement's statement. */
  readonly response?: ResponseRecord
  /** Without `response`: the answer, rendered in the settlement (with the receipts' signing key) but not stored. */
  readonly render?: RenderAnswer
}

export interface Settled {
  readonly usageId: string
  readonly billedMicros: bigint
  /** Set when receipts were sealed (complete calls): the v2 envelope and its jti. */
  readonly receipt: { readonly jti: string; readonly v2: unknown } | undefined
  /** What `call.response` (stored) or `call.render` rendered, when one was given: answer exactly this. */
  readonly response?: StoredResponse
}

/**
 * Money around a relay call. `hold` admits a call only while the wallet's available balance (balance minus
 * holds) is positive, reserving the call's maximum cost; `settle` writes the usage record, the debit and its
 * ledger row, releases the hold and seals the receipts in ONE transaction, so none can exist without the others.
 */
export class Settlement extends Context.Service<Settlement, {
  /** `InsufficientBalance` when nothing is available. */
  readonly hold: (orgId: string, amountMicros: bigint) => Effect.Effect<Hold, InsufficientBalance>
  readonly release: (hold: Hold) => Effect.Effect<void>
  readonly settle: (call: CompletedCall) => Effect.Effect<Settled>
  /**
   * Returns the holds past their expiry (calls that never settled: a node crashed mid-call) to their wallets; the
   * count returned. A supervised fiber runs it every minute; any number of nodes may run it at once.
   */
  readonly sweepExpiredHolds: Effect.Effect<number>
}>()("privacy-relay/Settlement") {}
