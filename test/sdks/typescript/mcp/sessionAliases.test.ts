// The per-session alias map: bounded (oldest forgotten first) and forgotten whole after being idle.
import { describe, expect, it } from "vitest"
import { createSessionAliases } from "../../../../sdks/typescript/src/mcp/sessionAliases.ts"

describe("createSessionAliases", () => {
  it("remembers aliases and forgets the oldest beyond maxEntries", () => {
    const aliases = createSessionAliases({ maxEntries: 2, idleMs: 60_000 })
    aliases.add(new Map([["<EMAIL_1_aaaa>", "a@x.org"], ["<EMAIL_2_bbbb>", "b@x.org"]]))
    aliases.add(new Map([["<EMAIL_3_cccc>", "c@x.org"]]))
    expect(aliases.size()).toBe(2)
    expect(aliases.get("<EMAIL_1_aaaa>")).toBeUndefined()
    expect(aliases.get("<EMAIL_2_bbbb>")).toBe("b@x.org")
    expect(aliases.get("<EMAIL_3_cccc>")).toBe("c@x.org")
  })

  it("forgets everything after idleMs without use, and a use resets the idle clock", () => {
    let now = 0
    const aliases = createSessionAliases({ maxEntries: 10, idleMs: 1000, now: () => now })
    aliases.add(new Map([["<PHONE_1_aaaa>", "+44 20 7946 0958"]]))
    now = 900
    expect(aliases.get("<PHONE_1_aaaa>")).toBe("+44 20 7946 0958")
    now = 1800
    expect(aliases.get("<PHONE_1_aaaa>")).toBe("+44 20 7946 0958")
    now = 2801
    expect(aliases.get("<PHONE_1_aaaa>")).toBeUndefined()
    expect(aliases.size()).toBe(0)
  })

  it("clear forgets all", () => {
    const aliases = createSessionAliases({ maxEntries: 10, idleMs: 1000 })
    aliases.add(new Map([["<EMAIL_1_aaaa>", "a@x.org"]]))
    aliases.clear()
    expect(aliases.get("<EMAIL_1_aaaa>")).toBeUndefined()
  })
})
