import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { base32Decode, base32Encode } from "../../../src/crypto/base32.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)

describe("lowercase unpadded base32", () => {
  it("matches the RFC 4648 section 10 vectors, lower-cased and without padding", () => {
    const vectors: Array<[string, string]> = [
      ["", ""],
      ["f", "my"],
      ["fo", "mzxq"],
      ["foo", "mzxw6"],
      ["foob", "mzxw6yq"],
      ["fooba", "mzxw6ytb"],
      ["foobar", "mzxw6ytboi"]
    ]
    for (const [plain, encoded] of vectors) {
      expect(base32Encode(utf8(plain))).toBe(encoded)
      expect(new TextDecoder().decode(base32Decode(encoded))).toBe(plain)
    }
  })

  it("encodes 32 random bytes (a gateway key body) in 52 characters of the alphabet", () => {
    const body = base32Encode(crypto.getRandomValues(new Uint8Array(32)))
    expect(body).toMatch(/^[a-z2-7]{52}$/)
  })

  it("round-trips arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        expect(Array.from(base32Decode(base32Encode(bytes)))).toEqual(Array.from(bytes))
      })
    )
  })

  it("rejects upper case, padding, impossible lengths and non-zero trailing bits", () => {
    expect(() => base32Decode("MY")).toThrow()
    expect(() => base32Decode("my======")).toThrow()
    expect(() => base32Decode("mzx")).toThrow()
    expect(() => base32Decode("mz")).toThrow() // 'z' sets bits beyond the single byte
  })
})
