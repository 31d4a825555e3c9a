import canonicalize from "canonicalize"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  canonicalBytes,
  canonicalString,
  jcsSha256Hex,
  jsonBodySha256Hex,
  parseJsonBytes,
  sha256Hex
} from "../../../../../sdks/typescript/src/wire/crypto/jcs.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)
const fromBits = (hex: string): number => {
  const view = new DataView(new ArrayBuffer(8))
  view.setBigUint64(0, BigInt(`0x${hex}`))
  return view.getFloat64(0)
}

describe("canonicalString (RFC 8785)", () => {
  it("reproduces the RFC 8785 section 3.2.2 example (numbers, string escapes, literals)", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals": [null, true, false]}'
    )
    expect(canonicalString(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
  })

  it("sorts keys by UTF-16 code units as in RFC 8785 section 3.2.3 (emoji before U+FB33)", () => {
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh",' +
        '"1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control",' +
        '"\\u00f6":"Latin Small Letter O With Diaeresis"}'
    )
    // Compared on the text: Object.keys would put the integer-like key "1" first regardless.
    const keysInTextOrder = [...canonicalString(input).matchAll(/"([^"]*)":"/g)].map((m) => JSON.parse(`"${m[1]}"`))
    expect(keysInTextOrder).toEqual(["\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"])
  })

  it("serialises the RFC 8785 appendix B numbers in ECMAScript form", () => {
    const cases: Array<[string, string]> = [
      ["0000000000000000", "0"],
      ["8000000000000000", "0"], // -0
      ["0000000000000001", "5e-324"],
      ["8000000000000001", "-5e-324"],
      ["7fefffffffffffff", "1.7976931348623157e+308"],
      ["4340000000000000", "9007199254740992"],
      ["c340000000000000", "-9007199254740992"],
      ["4430000000000000", "295147905179352830000"],
      ["44b52d02c7e14af6", "1e+23"],
      ["3eb0c6f7a0b5ed8d", "0.000001"],
      ["41b3de4355555555", "333333333.3333333"]
    ]
    for (const [bits, expected] of cases) expect(canonicalString(fromBits(bits))).toBe(expected)
    expect(canonicalString([1e21, 1e20, 1e-7, 4.5])).toBe("[1e+21,100000000000000000000,1e-7,4.5]")
  })

  it("sorts nested objects and keeps array order", () => {
    expect(canonicalString({ b: [3, { z: 1, a: { d: null, c: "x" } }], a: true })).toBe(
      '{"a":true,"b":[3,{"a":{"c":"x","d":null},"z":1}]}'
    )
  })

  it("rejects values JSON cannot represent", () => {
    expect(() => canonicalString(undefined)).toThrow()
    expect(() => canonicalString(Number.NaN)).toThrow()
    expect(() => canonicalString({ a: Infinity })).toThrow()
    expect(() => canonicalString("\ud800")).toThrow()
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(() => canonicalString(cyclic)).toThrow()
  })

  it("agrees with the canonicalize package (the implementation it replaced) on arbitrary JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalString(value)).toBe(canonicalize(value))
      }),
      { numRuns: 500 }
    )
  })

  it("leaves out undefined, function and symbol members, writes them as null in arrays, and calls toJSON", () => {
    expect(canonicalString({ b: undefined, a: [undefined, () => 1, Symbol("s"), 2], c: () => 1, d: Symbol("s") })).toBe('{"a":[null,null,null,2]}')
    expect(canonicalString({ at: new Date(Date.UTC(2024, 0, 2)) })).toBe('{"at":"2024-01-02T00:00:00.000Z"}')
    expect(canonicalString({ z: { toJSON: () => ({ b: 1, a: 2 }) } })).toBe('{"z":{"a":2,"b":1}}')
  })

  it("rejects a lone surrogate in a key, a bigint, and a cycle through an array, with a TypeError", () => {
    expect(() => canonicalString({ "\udc00": 1 })).toThrow(TypeError)
    expect(() => canonicalString({ a: 1n })).toThrow(TypeError)
    const cyclic: Array<unknown> = []
    cyclic.push({ back: cyclic })
    expect(() => canonicalString(cyclic)).toThrow(TypeError)
    // The same object twice, not inside itself, is no cycle.
    const shared = { x: 1 }
    expect(canonicalString([shared, { shared }])).toBe('[{"x":1},{"shared":{"x":1}}]')
  })

  it("encodes the canonical text as UTF-8", () => {
    expect(Array.from(canonicalBytes("€"))).toEqual([0x22, 0xe2, 0x82, 0xac, 0x22])
  })
})

describe("sha256Hex", () => {
  it("matches the FIPS 180-2 'abc' and empty-string digests", async () => {
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(await sha256Hex(new Uint8Array())).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })

  it("hashes a string as its UTF-8 bytes", async () => {
    expect(await sha256Hex("é€")).toBe(await sha256Hex(utf8("é€")))
  })

  it("jcsSha256Hex hashes the canonical bytes", async () => {
    expect(await jcsSha256Hex({ b: 1, a: 2 })).toBe(await sha256Hex('{"a":2,"b":1}'))
  })
})

describe("jsonBodySha256Hex (hash_upstream_request / egress_sha256)", () => {
  const compact = '{"model":"local-chat","messages":[{"role":"user","content":"hi  <PERSON_1>"}],"stream":false}'

  it("is independent of key order and whitespace between tokens", async () => {
    const reordered = '{ "stream" : false,\n  "messages": [ { "content": "hi  <PERSON_1>", "role": "user" } ],\r\n\t"model":"local-chat" }'
    expect(await jsonBodySha256Hex(utf8(reordered))).toBe(await jsonBodySha256Hex(utf8(compact)))
  })

  it("changes when whitespace inside a string value changes", async () => {
    const trimmed = compact.replace("hi  <PERSON_1>", "hi <PERSON_1>")
    expect(await jsonBodySha256Hex(utf8(trimmed))).not.toBe(await jsonBodySha256Hex(utf8(compact)))
  })

  it("keeps empty strings distinct from null", async () => {
    expect(await jsonBodySha256Hex(utf8('{"a":""}'))).not.toBe(await jsonBodySha256Hex(utf8('{"a":null}')))
  })

  it("rejects bytes that are not JSON or not UTF-8", async () => {
    await expect(jsonBodySha256Hex(utf8("not json"))).rejects.toThrow()
    expect(() => parseJsonBytes(new Uint8Array([0x22, 0xff, 0x22]))).toThrow()
  })
})
