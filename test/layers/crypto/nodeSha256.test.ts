import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { jcsSha256HexSync, jsonBodySha256HexSync, requestBodySha256HexSync, sha256HexSync } from "../../../layers/crypto/nodeSha256.ts"
import { jcsSha256Hex, jsonBodySha256Hex, sha256Hex } from "../../../sdks/typescript/src/wire/crypto/jcs.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)

// Bodies that exercise what JCS normalises (key order, whitespace, number forms, escapes) and what it keeps
// (non-ASCII text, emoji, whitespace inside strings), including the RFC 8785 section 3.2.2/3.2.3 examples.
const BODIES = [
  '{"model":"local-chat","messages":[{"role":"user","content":"hi"}]}',
  '{ "messages" : [ { "content" : "hi", "role" : "user" } ] , "model" : "local-chat" }',
  '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
    '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
  '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
    '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
  '{"text":"Grüße aus Zürich — 東京 😀","nested":{"b":[1,2,{"z":0,"a":-0}],"a":"  spaced  "}}',
  "[1, 2.5, -3e-7, true, null]",
  '"just a string"',
  "42"
]

describe("node SHA-256 helpers", () => {
  it("jsonBodySha256HexSync equals jsonBodySha256Hex on RFC 8785-style bodies", async () => {
    for (const body of BODIES) {
      expect(jsonBodySha256HexSync(utf8(body))).toBe(await jsonBodySha256Hex(utf8(body)))
    }
  })

  it("is independent of key order and whitespace, but not of string content", () => {
    const a = jsonBodySha256HexSync(utf8('{"a":1,"b":{"c":"ü","d":[1,2]}}'))
    expect(jsonBodySha256HexSync(utf8('{ "b" : { "d" : [ 1 , 2 ], "c" : "\\u00fc" }, "a" : 1 }'))).toBe(a)
    expect(jsonBodySha256HexSync(utf8('{"a":1,"b":{"c":"ü ","d":[1,2]}}'))).not.toBe(a)
  })

  it("jcsSha256HexSync equals jcsSha256Hex on values", async () => {
    for (const body of BODIES) {
      const value: unknown = JSON.parse(body)
      expect(jcsSha256HexSync(value)).toBe(await jcsSha256Hex(value))
    }
  })

  it("sha256HexSync equals sha256Hex for strings (as UTF-8) and bytes", async () => {
    for (const text of ["", "abc", "Grüße 😀"]) {
      expect(sha256HexSync(text)).toBe(await sha256Hex(text))
      expect(sha256HexSync(utf8(text))).toBe(await sha256Hex(utf8(text)))
    }
    expect(sha256HexSync("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(sha256HexSync(utf8("x"))).toBe(createHash("sha256").update("x").digest("hex"))
  })

  it("throws, as the async version rejects, for bodies that are not UTF-8 JSON", async () => {
    for (const bad of [utf8("not json"), utf8('{"a":'), Uint8Array.of(0x22, 0xff, 0x22), new Uint8Array(0)]) {
      expect(() => jsonBodySha256HexSync(bad)).toThrow()
      await expect(jsonBodySha256Hex(bad)).rejects.toThrow()
    }
    expect(() => jcsSha256HexSync(undefined)).toThrow(TypeError)
  })

  it("requestBodySha256HexSync gives jsonBodySha256HexSync's hash, remembered per request buffer", () => {
    const body = utf8('{"model":"m","messages":[{"role":"user","content":"hi"}]}')
    const expected = jsonBodySha256HexSync(body)
    expect(requestBodySha256HexSync(body)).toBe(expected)
    // The second reader of the same request body gets the remembered hash; the proof that it is remembered is that
    // it survives a change the real code never makes (request bodies are not written to after reading).
    body[body.length - 2] = 0x20
    expect(requestBodySha256HexSync(body)).toBe(expected)
    // Another buffer with other content is hashed on its own.
    const other = utf8('{"model":"m","messages":[]}')
    expect(requestBodySha256HexSync(other)).toBe(jsonBodySha256HexSync(other))
  })

  it("requestBodySha256HexSync does not remember views into a shared buffer (Node's Buffer pool)", () => {
    const pool = new Uint8Array(64)
    const first = utf8('{"a":1}')
    pool.set(first, 0)
    const view = pool.subarray(0, first.length)
    expect(requestBodySha256HexSync(view)).toBe(jsonBodySha256HexSync(first))
    const second = utf8('{"a":2}')
    pool.set(second, 0)
    expect(requestBodySha256HexSync(pool.subarray(0, second.length))).toBe(jsonBodySha256HexSync(second))
    expect(() => requestBodySha256HexSync(utf8("not json"))).toThrow()
  })
})
