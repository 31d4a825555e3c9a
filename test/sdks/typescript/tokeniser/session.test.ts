import { describe, expect, it, vi } from "vitest"
import { ALIAS_PATTERN, createSession, detokenise, tokeniseText } from "../../../../sdks/typescript/src/tokeniser/index.ts"

describe("aliases within and across requests", () => {
  it("gives the same value the same alias everywhere in one request, numbered per type", async () => {
    const session = createSession({ names: "off" })
    const a = await tokeniseText("a@example.com, b@example.com, a@example.com", session)
    const b = await tokeniseText("again a@example.com and +44 20 7946 0958", session)
    const [first, second, third] = a.split(", ")
    expect(first).toBe(third)
    expect(first).not.toBe(second)
    expect(first).toMatch(/^<EMAIL_1_[a-z2-9]{4}>$/)
    expect(second).toMatch(/^<EMAIL_2_[a-z2-9]{4}>$/)
    expect(b).toBe(`again ${first} and ${[...session.map.keys()].find((k) => k.startsWith("<PHONE_1_"))}`)
    expect(session.map.size).toBe(3)
    expect(session.detectorsFired).toEqual({ EMAIL: 4, PHONE: 1 })
  })

  it("does not share maps between sessions, and the same value gets unrelated aliases", async () => {
    const s1 = createSession({ names: "off" })
    const s2 = createSession({ names: "off" })
    const t1 = await tokeniseText("mail a@example.com", s1)
    const t2 = await tokeniseText("mail b@example.com", s2)
    expect(detokenise(t1, s2.map)).toBe(t1)
    expect(detokenise(t2, s1.map)).toBe(t2)
    expect(s1.map).not.toBe(s2.map)
    expect([...s1.map.values()]).toEqual(["a@example.com"])
    expect([...s2.map.values()]).toEqual(["b@example.com"])
    // With fresh secrets the tags differ, so the alias says nothing about which request it came from.
    const tags = new Set<string>()
    for (let i = 0; i < 20; i++) tags.add(await tokeniseText("a@example.com", createSession({ names: "off" })))
    expect(tags.size).toBeGreaterThan(15)
  })

  it("derives tags from the secret: the same secret reproduces the same aliases", async () => {
    const secret = new Uint8Array(32).fill(1)
    const x = await tokeniseText("a@example.com", createSession({ names: "off", secret }))
    const y = await tokeniseText("a@example.com", createSession({ names: "off", secret }))
    const z = await tokeniseText("a@example.com", createSession({ names: "off", secret: new Uint8Array(32).fill(2) }))
    expect(x).toBe(y)
    expect(x).not.toBe(z)
  })

  it("never mints an alias that already appears literally in the request", async () => {
    const secret = new Uint8Array(32).fill(3)
    const probe = createSession({ names: "off", secret })
    const wouldBe = await tokeniseText("a@example.com", probe)
    const session = createSession({ names: "off", secret })
    const text = `quote ${wouldBe} then a@example.com`
    const tokenised = await tokeniseText(text, session)
    const minted = [...session.map.keys()][0]!
    expect(minted).not.toBe(wouldBe)
    expect(minted).toMatch(/^<EMAIL_1_/)
    expect(detokenise(tokenised, session.map)).toBe(text)
  })

  it("detokenise replaces only aliases in the map and leaves unknown token-like text untouched", async () => {
    const session = createSession({ names: "off" })
    const t = await tokeniseText("x@example.com", session)
    const reply = `${t} <EMAIL_2_abcd> <EMAIL_1> <${t}>`
    expect(detokenise(reply, session.map)).toBe("x@example.com <EMAIL_2_abcd> <EMAIL_1> <x@example.com>")
    expect(t.match(new RegExp(ALIAS_PATTERN.source, "g"))).toEqual([t])
  })
})

describe("the session's keys are made only when an alias is minted", () => {
  it("imports no HMAC key and draws no secret for text without personal data, one key for text with some", async () => {
    const subtle = globalThis.crypto.subtle
    const importKey = vi.spyOn(subtle, "importKey")
    const getRandomValues = vi.spyOn(globalThis.crypto, "getRandomValues")
    try {
      const clean = createSession({ names: "off" })
      expect(await tokeniseText("Say hello.", clean)).toBe("Say hello.")
      expect(importKey).not.toHaveBeenCalled()
      expect(getRandomValues).not.toHaveBeenCalled()

      const withData = createSession({ names: "off" })
      const out = await tokeniseText("mail a@example.com or b@example.com", withData)
      expect(out).toMatch(/^mail <EMAIL_1_[a-z2-9]{4}> or <EMAIL_2_[a-z2-9]{4}>$/)
      // One per-request key for the whole session, from one fresh 32-byte secret.
      expect(importKey).toHaveBeenCalledTimes(1)
      expect(getRandomValues).toHaveBeenCalledTimes(1)
      expect(detokenise(out, withData.map)).toBe("mail a@example.com or b@example.com")
    } finally {
      importKey.mockRestore()
      getRandomValues.mockRestore()
    }
  })
})
