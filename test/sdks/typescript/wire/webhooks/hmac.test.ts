import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import { constantTimeEqual, hmacSha256Hex } from "../../../../../sdks/typescript/src/wire/webhooks/hmac.ts"

describe("hmacSha256Hex", () => {
  it("matches RFC 4231 test case 2 (key 'Jefe')", async () => {
    expect(await hmacSha256Hex("Jefe", "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
  })

  it("keys with the UTF-8 bytes of the secret, like node:crypto given a string", async () => {
    const secret = "whsec_ünïcødé-🔑"
    const message = "1700000000.{\"a\":\"é\"}"
    expect(await hmacSha256Hex(secret, message)).toBe(createHmac("sha256", secret).update(message, "utf8").digest("hex"))
  })
})

describe("constantTimeEqual", () => {
  it("is true only for identical strings", () => {
    expect(constantTimeEqual("abcdef", "abcdef")).toBe(true)
    expect(constantTimeEqual("abcdef", "abcdeg")).toBe(false)
    expect(constantTimeEqual("abcdef", "bbcdef")).toBe(false)
    expect(constantTimeEqual("abc", "abcd")).toBe(false)
    expect(constantTimeEqual("", "")).toBe(true)
  })
})
