import { Context, Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { afterThisTurn } from "../../../layers/relay/afterThisTurn.ts"

class Journal extends Context.Service<Journal, { readonly note: (what: string) => void }>()("test/Journal") {}

/** Resolves after the event loop has gone round once more (the check phase of the next turn). */
const nextLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("afterThisTurn", () => {
  it("runs the effect after the rest of the turn's synchronous work, before anything the event loop had queued, with the caller's services", async () => {
    const order: Array<string> = []
    const journal = Journal.of({ note: (what) => void order.push(what) })
    setImmediate(() => order.push("queued on the event loop before"))
    Effect.runSync(Effect.gen(function*() {
      yield* afterThisTurn(Effect.flatMap(Effect.service(Journal), (j) => Effect.sync(() => j.note("deferred, with the service"))))
      // The answer written later in the same synchronous run goes first.
      order.push("rest of the turn")
    }).pipe(Effect.provideService(Journal, journal)))
    expect(order).toEqual(["rest of the turn"])
    await nextLoopTurn()
    expect(order).toEqual(["rest of the turn", "deferred, with the service", "queued on the event loop before"])
  })

  it("runs the effect whole even when the fiber that asked for it is interrupted at once", async () => {
    const steps: Array<string> = []
    const fiber = Effect.runFork(Effect.gen(function*() {
      yield* afterThisTurn(Effect.gen(function*() {
        steps.push("started")
        // A suspension point: an interruptible fiber would stop here.
        yield* Effect.promise(() => nextLoopTurn())
        steps.push("ended")
      }))
      return yield* Effect.never
    }))
    Effect.runSync(Fiber.interrupt(fiber))
    await nextLoopTurn()
    await nextLoopTurn()
    expect(steps).toEqual(["started", "ended"])
  })
})
