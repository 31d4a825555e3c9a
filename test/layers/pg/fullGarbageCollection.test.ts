import { setImmediate as tick } from "node:timers/promises"
import { describe, expect, it } from "vitest"
import { collectGarbageNow } from "../../../layers/pg/fullGarbageCollection.ts"

describe("collectGarbageNow", () => {
  it("collects what nothing references any more, without leaving gc() reachable from the program", async () => {
    const ref = (() => new WeakRef({ payload: new Uint8Array(1 << 20) }))()
    // A WeakRef's target is kept until the job that created (or last dereferenced) it has finished.
    await tick()
    collectGarbageNow()
    expect(ref.deref()).toBeUndefined()
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined()
  })
})
