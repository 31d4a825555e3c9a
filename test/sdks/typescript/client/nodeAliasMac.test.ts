import { describe, expect, it } from "vitest"
import { nodeHmacSha256 } from "../../../../sdks/typescript/src/client/nodeAliasMac.ts"
import { tokeniseRequest } from "../../../../sdks/typescript/src/tokeniser/index.ts"

const secret = (fill: number) => new Uint8Array(32).fill(fill)

/** A turn with values of several kinds and end-user identifiers, so every MAC the tokeniser takes is exercised. */
const body = () => ({
  model: "local-chat",
  user: "customer-4711",
  metadata: { account: "acct-99" },
  messages: [{ role: "user", name: "jane", content: "Mail jane.doe@example.com or call +44 20 7946 0958; IBAN DE89 3704 0044 0532 0130 00." }]
})

describe("node:crypto HMAC for alias tags (the local proxy's)", () => {
  it("is HMAC-SHA256: RFC 4231 test case 2", () => {
    const mac = nodeHmacSha256(new TextEncoder().encode("Jefe"), new TextEncoder().encode("what do ya want for nothing?")) as Uint8Array
    expect(Buffer.from(mac).toString("hex")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
  })

  it("gives byte for byte the body and aliases WebCrypto's gives: per-request, end-user and stable aliases", async () => {
    for (const route of ["chat.completions", "embeddings"] as const) {
      const input = route === "embeddings" ? () => ({ model: "e", user: "customer-4711", input: ["jane.doe@example.com"] }) : body
      const options = { names: "off" as const, secret: secret(1), identifierSecret: secret(2), ...(route === "embeddings" ? { stableAliasSecret: secret(3) } : {}) }
      const web = await tokeniseRequest(route, input(), options)
      const node = await tokeniseRequest(route, input(), { ...options, hmacSha256: nodeHmacSha256 })
      expect(new TextDecoder().decode(node.bodyBytes)).toBe(new TextDecoder().decode(web.bodyBytes))
      expect([...node.map]).toEqual([...web.map])
      expect(web.map.size).toBeGreaterThan(0)
      expect(new TextDecoder().decode(node.bodyBytes)).not.toContain("jane.doe@example.com")
    }
  })
})
