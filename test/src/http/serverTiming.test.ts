import { describe, expect, it } from "vitest"
import { parseServerTiming, StageClock } from "../../../src/http/serverTiming.ts"

/** A clock the test moves by hand. */
const manualClock = (start: number) => {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

describe("Server-Timing stages", () => {
  it("each stage lasts from the previous stage's end (or the request's start) to its own", () => {
    const clock = manualClock(100)
    const stages = new StageClock(clock.now, 100)
    clock.advance(0.25)
    stages.end("auth")
    clock.advance(1.5)
    stages.end("hold")
    expect(stages.header(2)).toBe("auth;dur=0.250, hold;dur=1.500, total;dur=2.000")
  })

  it("a repeated stage adds up in its first place; bad names and negative times do not break the header", () => {
    const clock = manualClock(0)
    const stages = new StageClock(clock.now, 0)
    clock.advance(1)
    stages.end("upstream")
    clock.advance(2)
    stages.end("settle")
    clock.advance(3)
    stages.end("upstream")
    clock.advance(4)
    stages.end("Bad Name;dur=9")
    expect(stages.header(-1)).toBe("upstream;dur=4.000, settle;dur=2.000, total;dur=0.000")
  })

  it("keeps at most 32 stages however many are ended", () => {
    const clock = manualClock(0)
    const stages = new StageClock(clock.now, 0)
    for (let i = 0; i < 100; i++) {
      clock.advance(1)
      stages.end(`s${i}`)
    }
    expect(parseServerTiming(stages.header(100))).toHaveLength(33)
  })

  it("parses what it writes, and skips metrics without a duration or with junk", () => {
    expect(parseServerTiming("auth;dur=0.061, cache;desc=hit, hold;dur=0.4, x;dur=abc, total;dur=5.48")).toEqual([
      { name: "auth", ms: 0.061 },
      { name: "hold", ms: 0.4 },
      { name: "total", ms: 5.48 }
    ])
    expect(parseServerTiming(null)).toEqual([])
    expect(parseServerTiming("")).toEqual([])
  })
})
