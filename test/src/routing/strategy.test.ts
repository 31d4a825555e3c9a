import { describe, expect, it } from "vitest"
import { parseRoutingStrategy } from "../../../src/routing/strategy.ts"

describe("parseRoutingStrategy (X-Service-Routing)", () => {
  it("is off when the header is absent, empty or off", () => {
    for (const v of [undefined, "", "  ", "off", "OFF"]) expect(parseRoutingStrategy(v), String(v)).toBeUndefined()
  })
  it("accepts cost in any case with surrounding spaces", () => {
    expect(parseRoutingStrategy("cost")).toBe("cost")
    expect(parseRoutingStrategy(" Cost ")).toBe("cost")
  })
  it("reports an unknown strategy instead of ignoring it", () => {
    expect(parseRoutingStrategy("quality")).toEqual({ invalid: "quality" })
  })
})
