import canonicalize from "canonicalize"
import { importJWK } from "jose"
import { describe, expect, it } from "vitest"
import { base64UrlDecode } from "../../../../../sdks/typescript/src/wire/crypto/base64.ts"
import { signFailedReceiptV2 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v2-failed.ts"
import { signReceiptV1 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { signReceiptV2 } from "../../../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { decodeEnvelopeHeader, encodeEnvelopeHeader } from "../../../../../sdks/typescript/src/wire/receipts/header.ts"
import { makeKey, unsignedFailed, unsignedV1, unsignedV2, type TestKey } from "./fixtures.ts"

const key: TestKey = await makeKey()
const utf8 = (text: string) => new TextEncoder().encode(text)

/** Verifies with two independent stacks: plain WebCrypto on the JWK, and a jose-imported key. */
const independentlyVerifies = async (envelope: Record<string, unknown>): Promise<boolean> => {
  const { sig, signature: _signature, ...unsigned } = envelope
  const bytes = utf8(canonicalize(unsigned)!)
  const signatureBytes = base64UrlDecode(sig as string) as Uint8Array<ArrayBuffer>
  const webKey = await crypto.subtle.importKey("jwk", key.jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"])
  const joseKey = (await importJWK({ ...key.jwk }, "ES256")) as CryptoKey
  const params = { name: "ECDSA", hash: "SHA-256" }
  const results = [
    await crypto.subtle.verify(params, webKey, signatureBytes, bytes),
    await crypto.subtle.verify(params, joseKey, signatureBytes, bytes)
  ]
  return results.every(Boolean)
}

describe("signReceiptV2", () => {
  it("carries every spec field, v 2, ES256, the signer's kid, and identical signature/sig", async () => {
    const unsigned = unsignedV2()
    const receipt = await signReceiptV2(unsigned, key.signer)
    expect(Object.keys(receipt).sort()).toEqual(
      [
        "v", "alg", "kid", "iss", "jti", "iat", "timestamp", "request_id", "provider", "model", "routing_decision",
        "input_tokens", "output_tokens", "hash_upstream_request", "hash_upstream_response", "chain", "signature",
        "sig", "extensions"
      ].sort()
    )
    expect(receipt).toMatchObject({ ...unsigned, v: 2, alg: "ES256", kid: key.jwk.kid })
    expect(receipt.signature).toBe(receipt.sig)
    expect(receipt.sig).toMatch(/^[A-Za-z0-9_-]{86}$/)
    expect(base64UrlDecode(receipt.sig).length).toBe(64)
  })

  it("omits routing_decision when the router did not run", async () => {
    const { routing_decision: _r, ...withoutRouting } = unsignedV2()
    const receipt = await signReceiptV2(withoutRouting, key.signer)
    expect("routing_decision" in receipt).toBe(false)
    expect(await independentlyVerifies({ ...receipt })).toBe(true)
  })

  it("signs the JCS bytes without signature and sig (independent WebCrypto and jose verification)", async () => {
    const receipt = await signReceiptV2(unsignedV2(), key.signer)
    expect(await independentlyVerifies({ ...receipt })).toBe(true)
    expect(await independentlyVerifies({ ...receipt, output_tokens: 43 })).toBe(false)
  })

  it("does not sign members that are not part of the envelope", async () => {
    const receipt = await signReceiptV2({ ...unsignedV2(), prompt: "should never appear" } as never, key.signer)
    expect("prompt" in receipt).toBe(false)
  })
})

describe("signFailedReceiptV2", () => {
  it("is v2-shaped with outcome failed, error_code, status and no token counts, in the failed chain", async () => {
    const receipt = await signFailedReceiptV2(unsignedFailed(), key.signer)
    expect(receipt).toMatchObject({ v: 2, alg: "ES256", outcome: "failed", status: 402, error_code: "insufficient_balance" })
    expect("input_tokens" in receipt || "output_tokens" in receipt).toBe(false)
    expect(receipt.chain.chain_id).toBe("failed-v2-org-org_1")
    expect(receipt.signature).toBe(receipt.sig)
    expect(await independentlyVerifies({ ...receipt })).toBe(true)
  })
})

describe("signReceiptV1", () => {
  it("has v1, ecdsa-p256-sha256, sub, the tenant chain and the claims; sig verifies independently", async () => {
    const unsigned = unsignedV1()
    const receipt = await signReceiptV1(unsigned, key.signer)
    expect(Object.keys(receipt).sort()).toEqual(["alg", "chain", "claims", "iat", "iss", "jti", "kid", "sig", "sub", "v"])
    expect(receipt).toMatchObject({ ...unsigned, v: "v1", alg: "ecdsa-p256-sha256", kid: key.jwk.kid })
    expect(receipt.chain.chain_id).toBe("tenant-acct_1")
    expect(await independentlyVerifies({ ...receipt })).toBe(true)
  })
})

describe("receipt headers", () => {
  it("are standard padded base64 of the envelope JSON", async () => {
    const receipt = await signReceiptV2(unsignedV2(), key.signer)
    const header = encodeEnvelopeHeader(receipt)
    expect(header).toMatch(/^[A-Za-z0-9+/]+={0,2}$/)
    expect(JSON.parse(Buffer.from(header, "base64").toString("utf8"))).toEqual(receipt)
    expect(decodeEnvelopeHeader(header)).toEqual(receipt)
    expect(() => decodeEnvelopeHeader("not base64!")).toThrow()
  })
})
