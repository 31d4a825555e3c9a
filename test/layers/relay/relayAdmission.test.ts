import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { admitCall } from "../../../layers/relay/relayAdmission.ts"
import { Idempotency } from "../../../services/Idempotency.ts"
import type { GatewayPrincipal } from "../../../services/Keys.ts"
import { RelayLimits } from "../../../services/RelayLimits.ts"
import { Slots } from "../../../services/Slots.ts"

const principal: GatewayPrincipal = {
  keyId: "key_1",
  keyPrefix: "pr_test_1",
  orgId: "org_1",
  parentOrgId: null,
  accountId: "acct_1",
  tier: "default",
  permissions: null,
  models: null,
  expiresAt: null
}

/** RelayLimits that admits every call and writes each `finish` (and the test's own marks) into `journal`. */
const recordingLimits = (journal: Array<string>) =>
  Layer.succeed(RelayLimits, RelayLimits.of({
    admit: (_principal, _capability, ask) =>
      Effect.succeed({
        _tag: "Admitted" as const,
        headers: { ratelimit: "limit=10, remaining=9" },
        hold: { id: "hold_1", orgId: principal.orgId, amountMicros: ask.holdMicros },
        entry: { keys: [], id: "entry_1" }
      }),
    finish: (input) =>
      Effect.sync(() => {
        journal.push(`finish billed=${input.billedMicros} tokens=${input.tokens} slot=${input.slot === undefined ? "none" : `stored:${input.slot.stored}`}`)
      })
  }))

const services = (journal: Array<string>) =>
  Layer.mergeAll(
    recordingLimits(journal),
    Layer.succeed(Idempotency, Idempotency.of({ admit: () => Effect.die("not used"), find: () => Effect.succeed(undefined) })),
    Layer.succeed(Slots, Slots.of({
      acquire: () => Effect.succeed(true),
      renew: () => Effect.succeed(true),
      release: () => Effect.void,
      holder: () => Effect.succeed(undefined)
    }))
  )

const nextLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("admitCall: finishAfterAnswer", () => {
  it("ends the call once with what it billed, after the turn's synchronous work (the answer), and the release after it gives nothing back twice", async () => {
    const journal: Array<string> = []
    await Effect.runPromise(Effect.gen(function*() {
      const call = yield* admitCall(principal, "chat.completions", 5_000n, undefined)
      if (call._tag !== "Admitted") throw new Error("expected an admission")
      yield* call.finishAfterAnswer(1_234n, 42, false)
      // What bufferedResponse does next in the same run: the answer, then the call's scope closes.
      journal.push("answer written")
      yield* call.release
      yield* call.finish(0n, 0, false)
      journal.push("handler done")
    }).pipe(Effect.provide(services(journal))))
    // runPromise resolves on a microtask: the deferred end is still due (it runs on the next tick).
    await nextLoopTurn()
    expect(journal).toEqual(["answer written", "handler done", "finish billed=1234 tokens=42 slot=none"])
  })

  it("with an Idempotency-Key: the slot is released after the answer, marked stored", async () => {
    const journal: Array<string> = []
    await Effect.runPromise(Effect.gen(function*() {
      const call = yield* admitCall(principal, "chat.completions", 5_000n, { scope: "org_1|chat.completions", key: "k-1", bodyHash: "h" })
      if (call._tag !== "Admitted") throw new Error("expected an admission")
      yield* call.finishAfterAnswer(7n, 3, true)
      journal.push("answer written")
      yield* call.release
    }).pipe(Effect.provide(services(journal))))
    await nextLoopTurn()
    expect(journal).toEqual(["answer written", "finish billed=7 tokens=3 slot=stored:true"])
  })

  it("a release before any finish gives the hold back whole at once (the error path is unchanged)", async () => {
    const journal: Array<string> = []
    await Effect.runPromise(Effect.gen(function*() {
      const call = yield* admitCall(principal, "chat.completions", 5_000n, undefined)
      if (call._tag !== "Admitted") throw new Error("expected an admission")
      yield* call.release
      journal.push("after release")
      yield* call.finishAfterAnswer(9n, 1, false)
    }).pipe(Effect.provide(services(journal))))
    await nextLoopTurn()
    expect(journal).toEqual(["finish billed=0 tokens=0 slot=none", "after release"])
  })
})
