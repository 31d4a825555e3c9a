import { describe, expect, it } from "vitest"
import {
  classifyOutcome,
  DEFAULT_RETRY_SCHEDULE_MS,
  MAX_ATTEMPTS,
  nextAttemptDelay,
  parseScheduleOverride
} from "../../../src/webhooks/schedule.ts"

const s = 1000
const m = 60 * s
const h = 60 * m

describe("retry schedule", () => {
  it("is the spec table: 0, 15 s, 1 m, 5 m, 15 m, 1 h, 6 h before attempts 1..7", () => {
    expect(MAX_ATTEMPTS).toBe(7)
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([0, 15 * s, 1 * m, 5 * m, 15 * m, 1 * h, 6 * h])
  })

  it("adds up to the spec's cumulative column (attempt 7 at about 7 h 21 m)", () => {
    const cumulative = DEFAULT_RETRY_SCHEDULE_MS.reduce<number[]>((sums, delay) => [...sums, (sums.at(-1) ?? 0) + delay], [])
    expect(cumulative).toEqual([0, 15 * s, 75 * s, 6 * m + 15 * s, 21 * m + 15 * s, h + 21 * m + 15 * s, 7 * h + 21 * m + 15 * s])
  })

  it("nextAttemptDelay gives the delay before the next attempt and nothing after the 7th", () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => nextAttemptDelay(n))).toEqual([...DEFAULT_RETRY_SCHEDULE_MS])
    expect(nextAttemptDelay(7)).toBeUndefined()
    expect(nextAttemptDelay(1, [0, 1, 2, 3, 4, 5, 6])).toBe(1)
    expect(() => nextAttemptDelay(-1)).toThrow(RangeError)
  })
})

describe("parseScheduleOverride (WEBHOOK_RETRY_SCHEDULE_MS)", () => {
  it("uses the default schedule when unset or blank", () => {
    expect(parseScheduleOverride(undefined)).toBe(DEFAULT_RETRY_SCHEDULE_MS)
    expect(parseScheduleOverride("  ")).toBe(DEFAULT_RETRY_SCHEDULE_MS)
  })

  it("reads exactly seven non-negative integer ms entries, spaces allowed", () => {
    expect(parseScheduleOverride("0,10,20,30,40,50,60")).toEqual([0, 10, 20, 30, 40, 50, 60])
    expect(parseScheduleOverride(" 5, 0 ,1,1,1,1,1")).toEqual([5, 0, 1, 1, 1, 1, 1])
  })

  it("throws on a wrong entry count or a non-integer entry", () => {
    expect(() => parseScheduleOverride("0,10,20")).toThrow(/7 comma-separated entries/)
    expect(() => parseScheduleOverride("0,10,20,30,40,50,60,70")).toThrow(RangeError)
    expect(() => parseScheduleOverride("0,10,20,30,40,50,-1")).toThrow(/entry 7/)
    expect(() => parseScheduleOverride("0,10,20,1.5,40,50,60")).toThrow(/entry 4/)
    expect(() => parseScheduleOverride("0,10,,30,40,50,60")).toThrow(/entry 3/)
    expect(() => parseScheduleOverride("0,10,20,30,40,50,1e3")).toThrow(RangeError)
  })
})

describe("classifyOutcome: the delivery state table", () => {
  it("2xx is delivered on any attempt", () => {
    for (const status of [200, 201, 204, 299]) {
      expect(classifyOutcome({ status }, 1)).toEqual({ state: "delivered" })
      expect(classifyOutcome({ status }, 7)).toEqual({ state: "delivered" })
    }
  })

  it("410 is dead and pauses the endpoint", () => {
    expect(classifyOutcome({ status: 410 }, 1)).toEqual({ state: "dead", pauseEndpoint: true })
    expect(classifyOutcome({ status: 410 }, 7)).toEqual({ state: "dead", pauseEndpoint: true })
  })

  it("any other 4xx is dead without retry and without pausing", () => {
    for (const status of [400, 401, 403, 404, 409, 422, 429, 499]) {
      expect(classifyOutcome({ status }, 1)).toEqual({ state: "dead", pauseEndpoint: false })
    }
  })

  it("5xx, timeout and network failure retry with the delay before the next attempt", () => {
    for (const outcome of [{ status: 500 }, { status: 503 }, { error: "timeout" as const }, { error: "network" as const }]) {
      for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
        expect(classifyOutcome(outcome, attempt)).toEqual({ state: "retrying", delayMs: DEFAULT_RETRY_SCHEDULE_MS[attempt] })
      }
    }
    expect(classifyOutcome({ status: 502 }, 1)).toEqual({ state: "retrying", delayMs: 15 * s })
    expect(classifyOutcome({ error: "timeout" }, 6)).toEqual({ state: "retrying", delayMs: 6 * h })
  })

  it("the 7th failed attempt is dead", () => {
    for (const outcome of [{ status: 500 }, { error: "timeout" as const }, { error: "network" as const }, { status: 302 }]) {
      expect(classifyOutcome(outcome, 7)).toEqual({ state: "dead", pauseEndpoint: false })
    }
  })

  it("3xx is a failed attempt (redirect not followed) and is retried like 5xx", () => {
    expect(classifyOutcome({ status: 301 }, 1)).toEqual({ state: "retrying", delayMs: 15 * s })
    expect(classifyOutcome({ status: 307 }, 3)).toEqual({ state: "retrying", delayMs: 5 * m })
  })

  it("an error wins over a status, and a missing answer counts as a network failure", () => {
    expect(classifyOutcome({ status: 200, error: "timeout" }, 1)).toEqual({ state: "retrying", delayMs: 15 * s })
    expect(classifyOutcome({}, 2)).toEqual({ state: "retrying", delayMs: 1 * m })
    expect(classifyOutcome({ status: 101 }, 2)).toEqual({ state: "retrying", delayMs: 1 * m })
  })

  it("uses an overridden schedule", () => {
    expect(classifyOutcome({ status: 500 }, 1, [0, 10, 20, 30, 40, 50, 60])).toEqual({ state: "retrying", delayMs: 10 })
  })

  it("refuses attempt numbers outside 1..7", () => {
    expect(() => classifyOutcome({ status: 500 }, 0)).toThrow(RangeError)
    expect(() => classifyOutcome({ status: 500 }, 8)).toThrow(RangeError)
  })
})
