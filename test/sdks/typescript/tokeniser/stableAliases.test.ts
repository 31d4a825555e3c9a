import { describe, expect, it } from "vitest"
import {
  ALIAS_PATTERN,
  createSession,
  createStreamingDetokeniser,
  detokenise,
  tokeniseRequest,
  tokeniseText
} from "../../../../sdks/typescript/src/tokeniser/index.ts"

const SECRET = new Uint8Array(32).fill(7)
const OTHER_SECRET = new Uint8Array(32).fill(8)
const STABLE_EMAIL = /^<EMAIL_[a-z2-9]{10}>$/

const embeddingsBody = {
  model: "local-embed",
  input: ["Invoice for jane.doe@example.com, IBAN GB82 WEST 1234 5698 7654 32", "Call +44 20 7946 0958 about jane.doe@example.com"]
}

describe("stable aliases (stableAliasSecret)", () => {
  it("same input, same secret: the same aliases and byte-identical tokenised bodies in separate requests", async () => {
    const a = await tokeniseRequest("embeddings", embeddingsBody, { names: "off", stableAliasSecret: SECRET })
    const b = await tokeniseRequest("embeddings", embeddingsBody, { names: "off", stableAliasSecret: SECRET })
    expect(new TextDecoder().decode(a.bodyBytes)).toBe(new TextDecoder().decode(b.bodyBytes))
    expect([...a.map]).toEqual([...b.map])
    expect([...a.map.values()].sort()).toEqual(["+44 20 7946 0958", "GB82 WEST 1234 5698 7654 32", "jane.doe@example.com"])
    const text = new TextDecoder().decode(a.bodyBytes)
    for (const original of a.map.values()) expect(text).not.toContain(original)
    expect(a.detectorsFired).toEqual({ EMAIL: 2, IBAN: 1, PHONE: 1 })
  })

  it("the alias depends on the value only, not on its position or the other values (a query matches a document)", async () => {
    const document = await tokeniseText("From bob@example.org and jane.doe@example.com", createSession({ names: "off", stableAliasSecret: SECRET }))
    const query = await tokeniseText("jane.doe@example.com", createSession({ names: "off", stableAliasSecret: SECRET }))
    expect(query).toMatch(STABLE_EMAIL)
    expect(document).toBe(`From ${document.split(" ")[1]} and ${query}`)
    expect(document.split(" ")[1]).toMatch(STABLE_EMAIL)
    expect(document.split(" ")[1]).not.toBe(query)
  })

  it("different secrets give different aliases; without a secret aliases stay per request", async () => {
    const mine = await tokeniseText("jane.doe@example.com", createSession({ names: "off", stableAliasSecret: SECRET }))
    const theirs = await tokeniseText("jane.doe@example.com", createSession({ names: "off", stableAliasSecret: OTHER_SECRET }))
    expect(mine).toMatch(STABLE_EMAIL)
    expect(theirs).toMatch(STABLE_EMAIL)
    expect(mine).not.toBe(theirs)
    const perRequest = await tokeniseText("jane.doe@example.com", createSession({ names: "off" }))
    expect(perRequest).toMatch(/^<EMAIL_1_[a-z2-9]{4}>$/)
  })

  it("detokenises exactly, whole and streamed, keeping spellings of one value apart", async () => {
    const session = createSession({ names: "off", stableAliasSecret: SECRET })
    const text = "Jane.Doe@Example.com vs jane.doe@example.com, card 4111 1111 1111 1111"
    const tokenised = await tokeniseText(text, session)
    expect(session.map.size).toBe(3)
    expect(tokenised.match(new RegExp(ALIAS_PATTERN.source, "g"))).toHaveLength(3)
    expect(detokenise(tokenised, session.map)).toBe(text)
    const streaming = createStreamingDetokeniser(session.map)
    let out = ""
    for (let i = 0; i < tokenised.length; i += 3) out += streaming.push(tokenised.slice(i, i + 3))
    expect(out + streaming.flush()).toBe(text)
  })

  it("a request that already contains a value's stable alias literally gets another alias for it, still exact", async () => {
    const wouldBe = await tokeniseText("jane.doe@example.com", createSession({ names: "off", stableAliasSecret: SECRET }))
    const session = createSession({ names: "off", stableAliasSecret: SECRET })
    const text = `quote ${wouldBe} then jane.doe@example.com`
    const tokenised = await tokeniseText(text, session)
    const minted = [...session.map.keys()][0]!
    expect(minted).toMatch(STABLE_EMAIL)
    expect(minted).not.toBe(wouldBe)
    expect(detokenise(tokenised, session.map)).toBe(text)
  })
})
