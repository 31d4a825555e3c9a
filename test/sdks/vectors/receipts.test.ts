import { p256 } from "@noble/curves/nist.js"
import { describe, expect, it } from "vitest"
import { base64UrlDecode } from "../../../sdks/typescript/src/wire/crypto/base64.ts"
import { jwkThumbprintKid } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { signFailedReceiptV2 } from "../../../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import { signReceiptV1 } from "../../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { signReceiptV2 } from "../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { decodeEnvelopeHeader } from "../../../sdks/typescript/src/wire/receipts/header.ts"
import { keyResolverFromJwks } from "../../../sdks/typescript/src/wire/receipts/jwks.ts"
import type { Signer } from "../../../sdks/typescript/src/wire/receipts/signer.ts"
import { verifyReceipt as gatewayVerifyReceipt } from "../../../sdks/typescript/src/wire/receipts/verify.ts"
import { verifyChain, verifyChainExport, verifyReceipt } from "../../../sdks/typescript/src/verify/index.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const v = readVectors("receipts.json")
const d = base64UrlDecode(v.gateway_key.private_jwk.d)
const signer: Signer = { kid: v.gateway_key.kid, sign: async (bytes) => p256.sign(bytes, d, { prehash: true, lowS: false }) }

const withoutSigned = ({ v: _v, alg: _a, kid: _k, signature: _s, sig: _g, outcome: _o, ...rest }: Record<string, unknown>) => rest

describe("receipts.json: the gateway's builders reproduce every receipt byte for byte", () => {
  it("the JWKS publishes the key under its RFC 7638 thumbprint", async () => {
    expect(await jwkThumbprintKid(v.gateway_key.public_jwk)).toBe(v.gateway_key.kid)
    expect(v.jwks.keys[0]).toMatchObject({ ...v.gateway_key.public_jwk, kid: v.gateway_key.kid, alg: "ES256", use: "sig" })
  })

  it("v2, failed and v1 receipts (member order and deterministic signatures)", async () => {
    for (const r of [...v.receipts.v2, v.receipts.v2_fork]) expect(JSON.stringify(await signReceiptV2(withoutSigned(r) as never, signer))).toBe(JSON.stringify(r))
    for (const r of v.receipts.failed) expect(JSON.stringify(await signFailedReceiptV2(withoutSigned(r) as never, signer))).toBe(JSON.stringify(r))
    for (const r of v.receipts.v1) expect(JSON.stringify(await signReceiptV1(withoutSigned(r) as never, signer))).toBe(JSON.stringify(r))
  })
})

describe("receipts.json: verifyReceipt", () => {
  const resolveKey = keyResolverFromJwks(v.jwks)
  it.each(rows(v.cases))("%s", async (_n, c: any) => {
    const options = { nowSeconds: c.now_seconds, previous: c.previous, attestation: c.attestation }
    // the SDK, with every input form
    expect(await verifyReceipt(c.input, { jwks: v.jwks, ...options })).toEqual(c.expected)
    // the gateway's own verifier (POST /api/v1/receipts/verify), given the decoded envelopes
    let envelope: unknown
    try {
      envelope = typeof c.input === "string" ? (c.input.startsWith("{") ? JSON.parse(c.input) : decodeEnvelopeHeader(c.input)) : c.input
    } catch {
      return // not decodable: the route answers 400 before its verifier runs
    }
    const attestation = typeof c.attestation === "string" ? decodeEnvelopeHeader(c.attestation) : c.attestation
    expect(await gatewayVerifyReceipt(envelope, { resolveKey, ...options, attestation })).toEqual(c.expected)
  })
})

const asExpected = (result: Awaited<ReturnType<typeof verifyChain>>) => ({
  valid: result.valid,
  verified: result.verified,
  break: result.break === null ? null : { index: result.break.index, seq: result.break.seq, kind: result.break.kind, reason: result.break.reason },
  gaps: result.gaps.map((g) => ({ index: g.index, after_seq: g.afterSeq, seq: g.seq }))
})

describe("receipts.json: verifyChain", () => {
  it.each(rows(v.chains))("%s", async (_n, c: any) => {
    const result = await verifyChain(c.receipts, { jwks: v.jwks, nowSeconds: c.now_seconds, allowGaps: c.allow_gaps === true })
    expect(asExpected(result)).toEqual(c.expected)
  })

  it("names every kind of break at least once", () => {
    const kinds = new Set(v.chains.filter((c: any) => c.expected.break !== null).map((c: any) => c.expected.break.kind))
    expect([...kinds].sort()).toEqual(["duplicate", "gap", "other_chain", "reorder", "substituted", "tampered", "unchained"])
  })
})

describe("receipts.json: verifyChainExport", () => {
  it.each(rows(v.chain_exports))("%s", async (_n, c: any) => {
    const result = await verifyChainExport(c.input, { jwks: v.jwks, nowSeconds: c.now_seconds, allowGaps: c.allow_gaps === true })
    expect({ valid: result.valid, chains: result.chains.map((chain) => ({ chain_id: chain.chainId, count: chain.count, ...asExpected(chain) })) }).toEqual(c.expected)
  })
})
