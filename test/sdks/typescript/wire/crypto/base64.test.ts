import fc from "fast-check"
import { describe, expect, it, vi } from "vitest"
import {
  base64Decode,
  base64DecodeUtf8,
  base64Encode,
  base64EncodeUtf8,
  base64UrlDecode,
  base64UrlEncode
} from "../../../../../sdks/typescript/src/wire/crypto/base64.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)

describe("standard padded base64", () => {
  it("matches the RFC 4648 section 10 test vectors", () => {
    const vectors: Array<[string, string]> = [
      ["", ""],
      ["f", "Zg=="],
      ["fo", "Zm8="],
      ["foo", "Zm9v"],
      ["foob", "Zm9vYg=="],
      ["fooba", "Zm9vYmE="],
      ["foobar", "Zm9vYmFy"]
    ]
    for (const [plain, encoded] of vectors) {
      expect(base64EncodeUtf8(plain)).toBe(encoded)
      expect(base64DecodeUtf8(encoded)).toBe(plain)
    }
  })

  it("agrees with Node's Buffer for arbitrary bytes, both ways", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const reference = Buffer.from(bytes).toString("base64")
        expect(base64Encode(bytes)).toBe(reference)
        expect(Array.from(base64Decode(reference))).toEqual(Array.from(bytes))
      })
    )
  })

  it("round-trips non-ASCII UTF-8 text", () => {
    expect(base64DecodeUtf8(base64EncodeUtf8("Grüße €😀"))).toBe("Grüße €😀")
  })

  it("rejects missing padding, foreign characters, url alphabet and non-canonical trailing bits", () => {
    expect(() => base64Decode("Zg")).toThrow()
    expect(() => base64Decode("Zm9v\n")).toThrow()
    expect(() => base64Decode("-_8=")).toThrow()
    expect(() => base64Decode("Zh==")).toThrow() // 'h' leaves non-zero bits after the single byte
  })
})

describe("base64url without padding", () => {
  it("uses - and _ and omits padding", () => {
    expect(base64UrlEncode(new Uint8Array([0xfb, 0xff]))).toBe("-_8")
    expect(base64Encode(new Uint8Array([0xfb, 0xff]))).toBe("+/8=")
    expect(base64UrlEncode(utf8("f"))).toBe("Zg")
  })

  it("agrees with Node's Buffer base64url for arbitrary bytes, both ways", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const reference = Buffer.from(bytes).toString("base64url")
        expect(base64UrlEncode(bytes)).toBe(reference)
        expect(Array.from(base64UrlDecode(reference))).toEqual(Array.from(bytes))
      })
    )
  })

  it("rejects padding, the standard alphabet and impossible lengths", () => {
    expect(() => base64UrlDecode("Zg==")).toThrow()
    expect(() => base64UrlDecode("+/8")).toThrow()
    expect(() => base64UrlDecode("Zm9vY")).toThrow()
  })
})

describe("without Node's Buffer (browsers, Deno): the hand-written encoder", () => {
  it("gives what Buffer gives, standard padded and url-safe unpadded", async () => {
    const NodeBuffer = Buffer
    vi.stubGlobal("Buffer", undefined)
    vi.resetModules()
    try {
      const portable = await import("../../../../../sdks/typescript/src/wire/crypto/base64.ts")
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(8), (bytes, offset) => {
          // A view into a larger buffer, as the attestation's signature and UTF-8 bytes can be.
          const view = new Uint8Array(offset + bytes.length)
          view.set(bytes, offset)
          const part = view.subarray(offset)
          expect(portable.base64Encode(part)).toBe(NodeBuffer.from(bytes).toString("base64"))
          expect(portable.base64UrlEncode(part)).toBe(NodeBuffer.from(bytes).toString("base64url"))
          // The hand-written decoder (the only one without Buffer) reads the same forms back.
          expect(Array.from(portable.base64Decode(NodeBuffer.from(bytes).toString("base64")))).toEqual(Array.from(bytes))
          expect(Array.from(portable.base64UrlDecode(NodeBuffer.from(bytes).toString("base64url")))).toEqual(Array.from(bytes))
        })
      )
      expect(() => portable.base64Decode("Zh==")).toThrow()
      expect(() => portable.base64UrlDecode("Zg==")).toThrow()
    } finally {
      vi.unstubAllGlobals()
      vi.resetModules()
    }
  })
})

describe("with Node's Buffer", () => {
  it("encodes a view into a larger buffer from its own offset and length only", () => {
    const whole = new Uint8Array([1, 2, 0xfb, 0xff, 0xbf, 9, 9])
    expect(base64Encode(whole.subarray(2, 5))).toBe("+/+/")
    expect(base64UrlEncode(whole.subarray(2, 4))).toBe("-_8")
  })
})

describe("with Node's Buffer: decoding", () => {
  it("stays strict: everything but the canonical form throws, as the hand-written decoder does", () => {
    const notCanonical = ["Zg", "Zg=", "Zg===", "Z===", "Zm9v=", "Zm9v====", "=Zm9", "Zm=9", "Zm 9v", "Zm9v\n", "Zm9vé===", "-_8=", "Zh==", "Zm9=", "Zm8_"]
    for (const text of notCanonical) expect(() => base64Decode(text), text).toThrow()
    const notCanonicalUrl = ["Zg==", "Zg=", "+/8", "Zm9vY", "Zh", "Zm9", "Zm 9", "Zm9vé"]
    for (const text of notCanonicalUrl) expect(() => base64UrlDecode(text), text).toThrow()
    expect(Array.from(base64Decode("Zm8="))).toEqual([0x66, 0x6f])
    expect(Array.from(base64UrlDecode("-_8"))).toEqual([0xfb, 0xff])
    expect(base64Decode("").length).toBe(0)
  })

  it("answers a plain Uint8Array with a buffer of its own, never a view into Buffer's shared pool", () => {
    const bytes = base64Decode("Zm9vYmFy")
    expect(Object.getPrototypeOf(bytes)).toBe(Uint8Array.prototype)
    expect(bytes.byteOffset).toBe(0)
    expect(bytes.buffer.byteLength).toBe(6)
    expect(Object.getPrototypeOf(base64UrlDecode("-_8"))).toBe(Uint8Array.prototype)
  })
})
