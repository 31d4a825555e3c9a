import canonicalize from "canonicalize"
import { describe, expect, it } from "vitest"
import { canonicalString } from "../../../../../sdks/typescript/src/wire/crypto/jcs.ts"
import { envelopeHash } from "../../../../../sdks/typescript/src/wire/receipts/chain.ts"
import { signReceiptV1, signReceiptV1Canonical } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { signReceiptV2Canonical } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { canonicalEnvelope, signingInput } from "../../../../../sdks/typescript/src/wire/receipts/signing-input.ts"
import { sha256Hex } from "../../../../../sdks/typescript/src/wire/crypto/jcs.ts"
import { makeKey, unsignedV1, unsignedV2 } from "./fixtures.ts"

const key = await makeKey()
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** Envelope-like objects whose member names sort differently by UTF-16 units than by code points or by insertion. */
const awkward = (): Array<Record<string, unknown>> => [
  { v: 2, alg: "ES256", chain: { seq: 3, prev_hash: "ab", chain_id: "c" }, extensions: { request_id: "r" }, iat: 1 },
  { "\u{1F600}": "astral", "\uFFFF": "bmp max", "é": 1.5e-7, a: [3, { z: null, y: true }], "": "empty name", A: -0 },
  { zeta: undefined, beta: () => 1, gamma: Symbol("s"), alpha: "kept", signature: "dropped", sig: "dropped too" },
  { nested: { toJSON: () => ({ b: 1, a: 2 }) }, num: 1e21, neg: -12.25, str: "quote \" and \\ and \u2028" }
]

describe("canonicalEnvelope", () => {
  it("gives signingInput's exact text, signature members removed, for awkward member names and values", () => {
    for (const envelope of awkward()) {
      expect(canonicalEnvelope(envelope).signingText).toBe(text(signingInput(envelope)))
    }
  })

  it("gives the JCS text of the envelope with its signature members added (what the chain hash covers)", () => {
    for (const envelope of awkward()) {
      const { sig: _s, signature: _t, ...unsigned } = envelope
      const signed = { ...unsigned, sig: "S1g", signature: "S1g" }
      expect(canonicalEnvelope(unsigned).signedText({ signature: "S1g", sig: "S1g" })).toBe(canonicalString(signed))
      expect(canonicalEnvelope(unsigned).signedText({ sig: "x" })).toBe(canonicalString({ ...unsigned, sig: "x" }))
    }
  })

  it("refuses an envelope that is not a plain object (a toJSON at the top would change what is canonical)", () => {
    expect(() => canonicalEnvelope({ toJSON: () => ({}) })).toThrow(TypeError)
  })

  it("throws as canonicalString does for a value JSON cannot carry", () => {
    expect(() => canonicalEnvelope({ n: Number.NaN })).toThrow(TypeError)
    expect(() => canonicalEnvelope({ s: "\uD800" })).toThrow(TypeError)
  })
})

describe("signReceiptV2Canonical / signReceiptV1Canonical", () => {
  it("answer the signed receipt's JCS text, whose SHA-256 is envelopeHash of the receipt (the next prev_hash)", async () => {
    const v2 = await signReceiptV2Canonical(unsignedV2(), key.signer)
    expect(v2.canonical).toBe(canonicalize(v2.receipt))
    expect(await sha256Hex(v2.canonical)).toBe(await envelopeHash(v2.receipt))
    const v1 = await signReceiptV1Canonical(unsignedV1(), key.signer)
    expect(v1.canonical).toBe(canonicalize(v1.receipt))
    expect(await sha256Hex(v1.canonical)).toBe(await envelopeHash(v1.receipt))
  })

  it("sign exactly what signReceiptV1 signs (same members, the signature over signingInput)", async () => {
    // ECDSA signatures are randomised, so compare the signed bytes through a recording signer.
    const seen: Array<string> = []
    const recording = { kid: key.signer.kid, sign: (bytes: Uint8Array) => (seen.push(text(bytes)), key.signer.sign(bytes)) }
    const unsigned = unsignedV1()
    const plain = await signReceiptV1(unsigned, recording)
    const { receipt } = await signReceiptV1Canonical(unsigned, recording)
    expect(seen[0]).toBe(text(signingInput(plain)))
    expect(seen[1]).toBe(text(signingInput(receipt)))
    expect({ ...receipt, sig: "" }).toEqual({ ...plain, sig: "" })
  })
})
