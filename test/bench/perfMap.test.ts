import { describe, expect, it } from "vitest"
import { newestCodeObjects } from "../../bench/perfMap.ts"

describe("bench/perfMap: a --perf-basic-prof map keeps the newest code object at each address", () => {
  it("drops an older object that a newer one overlaps, keeps what nothing newer covers, in address order", () => {
    const map = [
      "1000 100 JS:~startUp file:///a.ts:1:1", // collected at start-up: its space reused below
      "2000 10 JS:^kept file:///b.ts:2:2",
      "1080 40 JS:*hot file:///c.ts:3:3", // overlaps startUp's tail
      "3000 20 JS:*alone file:///d.ts:4:4",
      "not a map line",
      ""
    ].join("\n")
    expect(newestCodeObjects(map)).toEqual([
      "1080 40 JS:*hot file:///c.ts:3:3",
      "2000 10 JS:^kept file:///b.ts:2:2",
      "3000 20 JS:*alone file:///d.ts:4:4"
    ])
  })

  it("keeps objects that only touch (one ends where the next starts)", () => {
    expect(newestCodeObjects("10 10 A\n20 10 B\n")).toEqual(["10 10 A", "20 10 B"])
  })
})
