import { Effect, Layer, ManagedRuntime } from "effect"
import { expect, it } from "vitest"
import { Slots } from "../../services/Slots.ts"

const fresh = () => `slot-test:${crypto.randomUUID().slice(0, 8)}`
const sleep = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))

/**
 * What every Slots implementation must do (the idempotency in-flight marker relies on it: its owner renews it while
 * the original call runs, and a dead owner's slot lapses). Real time, short TTLs: Redis expires keys by its own clock.
 */
export const slotsContract = (makeLayer: () => Layer.Layer<Slots>) => {
  const withSlots = async <A>(use: (slots: Slots["Service"]) => Effect.Effect<A>) => {
    const runtime = ManagedRuntime.make(makeLayer())
    try {
      return await runtime.runPromise(Effect.flatMap(Effect.service(Slots), use))
    } finally {
      await runtime.dispose()
    }
  }

  it("a held slot refuses a second owner until its owner releases it; a stranger's release changes nothing", () =>
    withSlots((slots) =>
      Effect.gen(function*() {
        const key = fresh()
        expect(yield* slots.acquire(key, "a", 10_000)).toBe(true)
        expect(yield* slots.acquire(key, "b", 10_000)).toBe(false)
        yield* slots.release(key, "b")
        expect(yield* slots.holder(key)).toBe("a")
        yield* slots.release(key, "a")
        expect(yield* slots.holder(key)).toBeUndefined()
        expect(yield* slots.acquire(key, "b", 10_000)).toBe(true)
      })))

  it("renew by the owner pushes the expiry out: the slot outlives its first TTL and lapses after the renewed one", () =>
    withSlots((slots) =>
      Effect.gen(function*() {
        const key = fresh()
        expect(yield* slots.acquire(key, "owner", 300)).toBe(true)
        yield* sleep(200)
        expect(yield* slots.renew(key, "owner", 600)).toBe(true)
        // 400 ms after acquiring: past the first TTL, inside the renewed one.
        yield* sleep(200)
        expect(yield* slots.holder(key)).toBe("owner")
        expect(yield* slots.acquire(key, "other", 10_000)).toBe(false)
        // 900 ms after acquiring, 700 ms after the renewal: lapsed.
        yield* sleep(500)
        expect(yield* slots.holder(key)).toBeUndefined()
        expect(yield* slots.acquire(key, "other", 10_000)).toBe(true)
      })))

  it("renew by anyone but the holder is refused and leaves the holder's expiry alone", () =>
    withSlots((slots) =>
      Effect.gen(function*() {
        const key = fresh()
        expect(yield* slots.acquire(key, "owner", 300)).toBe(true)
        expect(yield* slots.renew(key, "stranger", 10_000)).toBe(false)
        yield* sleep(450)
        expect(yield* slots.holder(key)).toBeUndefined()
      })))

  it("a lapsed slot cannot be renewed by its former owner once another took it", () =>
    withSlots((slots) =>
      Effect.gen(function*() {
        const key = fresh()
        expect(yield* slots.acquire(key, "dead-node", 150)).toBe(true)
        yield* sleep(300)
        expect(yield* slots.renew(key, "dead-node", 10_000)).toBe(false)
        expect(yield* slots.acquire(key, "live-node", 10_000)).toBe(true)
        expect(yield* slots.renew(key, "dead-node", 10_000)).toBe(false)
        expect(yield* slots.holder(key)).toBe("live-node")
      })))
}
