import { Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { makeKeyedBatcher } from "../../layers/KeyedBatcher.ts"

/** A batcher whose `run` records every batch it was given and waits for `gate` before answering. */
const recordingBatcher = (gate?: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const batches: Array<{ key: string; items: ReadonlyArray<number> }> = []
    const { submit, busy } = yield* makeKeyedBatcher<number, string>({
      maxBatch: 4,
      run: (key, items) =>
        Effect.gen(function*() {
          batches.push({ key, items: [...items] })
          if (gate !== undefined) yield* Deferred.await(gate)
          return items.map((n) => (n < 0 ? Exit.die(new Error(`bad item ${n}`)) : Exit.succeed(`${key}:${n * 10}`)))
        })
    })
    return { submit, busy, batches }
  })

describe("makeKeyedBatcher", () => {
  it("runs a lone item at once as a batch of one", async () => {
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { submit, batches } = yield* recordingBatcher()
      const answer = yield* submit("a", 1)
      return { answer, batches }
    })))
    expect(out.answer).toBe("a:10")
    expect(out.batches).toEqual([{ key: "a", items: [1] }])
  })

  it("coalesces items queued while a batch runs into the next batches (at most maxBatch each), answering each its own result", async () => {
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { submit, batches } = yield* recordingBatcher(gate)
      const first = yield* Effect.forkChild(submit("a", 0))
      yield* Effect.yieldNow
      const rest = yield* Effect.forkChild(Effect.all([1, 2, 3, 4, 5, 6].map((n) => submit("a", n)), { concurrency: "unbounded" }))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      return { first: yield* Fiber.join(first), rest: yield* Fiber.join(rest), batches }
    })))
    expect(out.first).toBe("a:0")
    expect(out.rest).toEqual(["a:10", "a:20", "a:30", "a:40", "a:50", "a:60"])
    // The first item ran alone; the six that queued behind it went in batches of at most four, in arrival order.
    expect(out.batches.map((b) => b.items)).toEqual([[0], [1, 2, 3, 4], [5, 6]])
  })

  it("reports a key busy exactly while one of its batches is queued or being written", async () => {
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { submit, busy } = yield* recordingBatcher(gate)
      const before = busy("a")
      const fiber = yield* Effect.forkChild(submit("a", 1))
      yield* Effect.yieldNow
      const during = [busy("a"), busy("b")]
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(fiber)
      // The worker notices its empty queue one step after answering the last item.
      for (let i = 0; i < 10 && busy("a"); i++) yield* Effect.yieldNow
      return { before, during, after: busy("a") }
    })))
    expect(out).toEqual({ before: false, during: [true, false], after: false })
  })

  it("keeps keys apart: each key has its own queue and batches", async () => {
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { submit, batches } = yield* recordingBatcher()
      const answers = yield* Effect.all([submit("a", 1), submit("b", 2), submit("a", 3)], { concurrency: "unbounded" })
      return { answers, batches }
    })))
    expect(out.answers).toEqual(["a:10", "b:20", "a:30"])
    expect(out.batches.every((b) => b.items.every((n) => (b.key === "a" ? n !== 2 : n === 2)))).toBe(true)
  })

  it("fails only the item whose Exit failed; the others of its batch succeed", async () => {
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { submit } = yield* recordingBatcher(gate)
      const fibers = yield* Effect.forEach([1, -1, 2], (n) => Effect.forkChild(Effect.exit(submit("a", n))))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      return yield* Effect.forEach(fibers, Fiber.join)
    })))
    expect(Exit.isSuccess(out[0]) && out[0].value).toBe("a:10")
    expect(Exit.isFailure(out[1])).toBe(true)
    expect(Exit.isSuccess(out[2]) && out[2].value).toBe("a:20")
  })

  it("answers every item of a batch whose write failed as a whole with that failure", async () => {
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { submit } = yield* makeKeyedBatcher<number, string>({
        maxBatch: 8,
        run: () => Effect.die(new Error("database gone"))
      })
      return yield* Effect.all([1, 2, 3].map((n) => Effect.exit(submit("a", n))), { concurrency: "unbounded" })
    })))
    expect(out.every((exit) => Exit.isFailure(exit) && String(exit.cause).includes("database gone"))).toBe(true)
  })

  it("still writes an item whose caller was interrupted (a settlement is not lost when its client goes away)", async () => {
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { submit, batches } = yield* recordingBatcher(gate)
      const caller = yield* Effect.forkChild(submit("a", 7))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(caller)
      yield* Deferred.succeed(gate, undefined)
      const next = yield* submit("a", 8)
      return { batches, next }
    })))
    expect(out.batches.flatMap((b) => b.items)).toEqual([7, 8])
    expect(out.next).toBe("a:80")
  })

  it("closing the layer's scope writes everything queued before it finishes (nothing lost at shutdown)", async () => {
    const written: Array<number> = []
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { submit, busy } = yield* makeKeyedBatcher<number, void>({
        maxBatch: 2,
        run: (_, items) =>
          Effect.gen(function*() {
            yield* Effect.sleep("5 millis")
            written.push(...items)
            return items.map(() => Exit.void)
          })
      })
      // Callers outside the scope; the scope closes as soon as they have queued, mid-way through the first batch.
      for (const n of [1, 2, 3, 4, 5]) yield* Effect.forkDetach(submit("a", n))
      for (let i = 0; i < 20 && !busy("a"); i++) yield* Effect.yieldNow
      yield* Effect.yieldNow
      expect(busy("a")).toBe(true)
      expect(written).toEqual([])
    })))
    expect(written).toEqual([1, 2, 3, 4, 5])
  })
})
