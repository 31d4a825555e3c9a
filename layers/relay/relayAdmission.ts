/**
 * A relay call's admission as an owned resource: the wallet hold, the quota and rate windows and, with an
 * Idempotency-Key, the key's in-flight slot (kept alive by a heartbeat, announced to same-node duplicates). Acquired in
 * a Scope the call owns; closing the scope gives everything back (hold whole, slot free for a retry) unless the call
 * finished first with what it billed (`finish` runs once; later runs and the release are no-ops). A streamed answer
 * outlives the handler, so the scope is closed by whoever ends the call: the buffered answer, the stream's end, or
 * the failure before either.
 */
import { Deferred, Duration, Effect, Exit, Fiber, Scope } from "effect"
import { IDEMPOTENCY_WAIT_MS, Idempotency, IdempotencyInFlight, idempotencySlotKey, type StoredResponse } from "../../services/Idempotency.ts"
import type { GatewayPrincipal } from "../../services/Keys.ts"
import { RelayLimits } from "../../services/RelayLimits.ts"
import type { Hold } from "../../services/Settlement.ts"
import { Slots } from "../../services/Slots.ts"
import { RequestContext } from "../../services/RequestContext.ts"

/** The idempotency key of a call: its identity for the stored response, and the slot its admission took. */
export interface IdempotentRelay {
  readonly scope: string
  readonly key: string
  readonly bodyHash: string
}

/**
 * How a call ends, once: the hold back, the mirror debited by what was billed, the tokens counted, the slot
 * released (`stored`: the settlement stored the response). Safe to run again (a no-op).
 */
export type Finish = (billedMicros: bigint, tokens: number, stored: boolean) => Effect.Effect<void>

/**
 * The in-flight slot expires this long after its owner last renewed it (every SLOT_RENEW_MS while the call runs, up to
 * SLOT_MAX_HOLD_MS), as layers/pg/Idempotency.ts does: a node that died frees its keys' retries within 15 s.
 */
const SLOT_TTL_MS = 15_000
const SLOT_RENEW_MS = 5_000
const SLOT_MAX_HOLD_MS = 10 * 60_000
/** A duplicate on another node looks for the original's response this often while it waits. */
const POLL_MS = 50
/** Same-node duplicates wait on the original's Deferred instead of polling. */
const localOriginals = new Map<string, Deferred.Deferred<void>>()

/** An admitted call: what it holds, and how it ends. */
export interface AdmittedCall {
  readonly _tag: "Admitted"
  readonly hold: Hold
  /** The rate-limit headers of the admission, for the answer. */
  readonly limitHeaders: Readonly<Record<string, string>>
  readonly finish: Finish
  /** Closes the call's scope: gives back what `finish` has not settled. */
  readonly release: Effect.Effect<void>
  /**
   * Gives the admission back as if it had never been taken, its count in the rate windows included: for a call that
   * turned out to be a replay (or a key conflict) after it was admitted. A no-op after `finish`.
   */
  readonly withdraw: Effect.Effect<void>
}

/** The original with this Idempotency-Key stored its response while this call waited: answer with it. */
export interface ReplayInstead {
  readonly _tag: "Replay"
  readonly stored: StoredResponse
}

/**
 * Admission in ONE operation on the shared state (the key's slot, quota, rate windows, the wallet hold), waiting up
 * to IDEMPOTENCY_WAIT_MS while another call holds the same key's slot. The admission is the acquired resource of a
 * fresh scope the caller owns through `release`.
 */
export const admitCall = (
  principal: GatewayPrincipal,
  capability: string,
  holdMicros: bigint,
  idem: IdempotentRelay | undefined
) =>
  Effect.gen(function*() {
    const ctx = yield* RequestContext
    const limits = yield* RelayLimits
    const idempotency = yield* Idempotency
    const slots = yield* Slots
    const slot = idem === undefined ? undefined : { key: idempotencySlotKey(idem.scope, idem.key), owner: crypto.randomUUID(), ttlMs: SLOT_TTL_MS }
    const deadline = Date.now() + IDEMPOTENCY_WAIT_MS
    const admit = limits.admit(principal, capability, { holdMicros, slot }).pipe(
      Effect.onError(() => Effect.sync(() => ctx.stages.end("admission")))
    )
    let admission = yield* admit
    while (admission._tag === "SlotTaken") {
      // The original with this key is in flight (here or on another node), or has just stored its response.
      const found = yield* idempotency.find(idem!)
      if (found !== undefined) return { _tag: "Replay", stored: found } as ReplayInstead
      const remaining = deadline - Date.now()
      if (remaining <= 0) return yield* new IdempotencyInFlight()
      const original = localOriginals.get(slot!.key)
      if (original !== undefined) yield* Deferred.await(original).pipe(Effect.timeoutOption(Duration.millis(remaining)))
      else yield* Effect.sleep(Duration.millis(Math.min(POLL_MS, remaining)))
      admission = yield* admit
    }
    const { hold, headers: limitHeaders, entry } = admission
    ctx.stages.end("admission")

    const scope = yield* Scope.make()
    // Keeps the slot while this node runs the call; a failed renewal is tried again at the next tick. Lives in the
    // call's scope: closing it stops the renewals.
    const heartbeat = slot === undefined ? undefined : yield* Effect.forkIn(Effect.gen(function*() {
      for (let renewed = 0; renewed * SLOT_RENEW_MS < SLOT_MAX_HOLD_MS; renewed++) {
        yield* Effect.sleep(Duration.millis(SLOT_RENEW_MS))
        yield* slots.renew(slot.key, slot.owner, SLOT_TTL_MS).pipe(Effect.catchCause(() => Effect.void))
      }
    }), scope)
    const wakeDuplicates = slot === undefined ? undefined : Deferred.makeUnsafe<void>()
    if (slot !== undefined) localOriginals.set(slot.key, wakeDuplicates!)
    let finished = false
    const end = (billedMicros: bigint, tokens: number, stored: boolean, uncount: boolean): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (finished) return Effect.void
        finished = true
        if (slot !== undefined && localOriginals.get(slot.key) === wakeDuplicates) localOriginals.delete(slot.key)
        // The renewals stop before the slot is released, so none can follow the release.
        return (heartbeat === undefined ? Effect.void : Fiber.interrupt(heartbeat)).pipe(Effect.andThen(limits.finish({
          hold,
          capability,
          billedMicros,
          tokens,
          slot: slot === undefined ? undefined : { key: slot.key, owner: slot.owner, stored },
          ...(uncount ? { uncount: entry } : {})
        }))).pipe(Effect.andThen(wakeDuplicates === undefined ? Effect.void : Deferred.succeed(wakeDuplicates, undefined)), Effect.asVoid)
      })
    const finish: Finish = (billedMicros, tokens, stored) => end(billedMicros, tokens, stored, false)
    // The resource: nothing billed when the scope closes before the call finished (hold back whole, slot free).
    yield* Scope.addFinalizer(scope, finish(0n, 0, false))
    const release = Scope.close(scope, Exit.void)
    return { _tag: "Admitted", hold, limitHeaders, finish, release, withdraw: Effect.andThen(end(0n, 0, false, true), release) } as AdmittedCall
  })

/** Runs `use` with the call admitted; a failure (or interruption) of `use` releases the admission at once. */
export const releaseOnError = <A, E, R>(call: AdmittedCall, use: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  use.pipe(Effect.onError(() => call.release))
