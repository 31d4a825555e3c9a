import { describe, expect, it } from "vitest"
import { envelopeHash } from "../../../../sdks/typescript/src/wire/receipts/chain.ts"
import { signReceiptV1 } from "../../../../sdks/typescript/src/wire/receipts/envelope-v1.ts"
import { signReceiptV2 } from "../../../../sdks/typescript/src/wire/receipts/envelope-v2.ts"
import { encodeEnvelopeHeader } from "../../../../sdks/typescript/src/wire/receipts/header.ts"
import { createJwksCache, JwksError, verifyReceipt } from "../../../../sdks/typescript/src/verify/index.ts"
import { makeKey, NOW_SECONDS, unsignedV1, unsignedV2 } from "../wire/receipts/fixtures.ts"

const key = await makeKey()
const jwks = { keys: [key.jwk] }
const first = await signReceiptV2(unsignedV2(), key.signer)
const second = await signReceiptV2(unsignedV2(2, await envelopeHash(first)), key.signer)

/** A fetch that answers the JWKS route with whatever `sets` holds next and counts the calls. */
const jwksServer = (sets: Array<unknown>, status = 200) => {
  const calls: Array<string> = []
  const fetch = (async (input: RequestInfo | URL) => {
    calls.push(String(input))
    const body = sets[Math.min(calls.length - 1, sets.length - 1)]
    return new Response(typeof body === "string" ? body : JSON.stringify(body), { status })
  }) as typeof globalThis.fetch
  return { fetch, calls }
}

describe("verifyReceipt (SDK): the gateway's verifier over every input form", () => {
  it("accepts the object, its JSON text and its base64 header value alike", async () => {
    for (const input of [second, JSON.stringify(second), encodeEnvelopeHeader(second), `  ${encodeEnvelopeHeader(second)}\n`]) {
      const result = await verifyReceipt(input, { jwks, nowSeconds: NOW_SECONDS, previous: encodeEnvelopeHeader(first) })
      expect(result).toMatchObject({ valid: true, reason: null })
      expect(result.checks[4]!.detail).toBe("seq 2 follows seq 1 and prev_hash matches")
    }
  })

  it("a stored v1 verifies; a changed field fails at the signature", async () => {
    const v1 = await signReceiptV1(unsignedV1(), key.signer)
    expect((await verifyReceipt(v1, { jwks, nowSeconds: NOW_SECONDS })).valid).toBe(true)
    const tampered = { ...v1, sub: "svc_someone" }
    expect((await verifyReceipt(tampered, { jwks, nowSeconds: NOW_SECONDS })).reason).toBe(`signature: does not verify with key ${key.jwk.kid}`)
  })

  it("a broken link to the previous receipt is reported as chain linkage", async () => {
    const other = await signReceiptV2(unsignedV2(), key.signer)
    const result = await verifyReceipt(second, { jwks, nowSeconds: NOW_SECONDS, previous: other })
    expect(result.reason).toBe("chain linkage (seq and prev_hash): prev_hash is not the hash of the previous receipt")
  })

  it("a value that is no envelope fails the schema check with a clear reason, without throwing", async () => {
    const result = await verifyReceipt("not base64 at all!", { jwks })
    expect(result.valid).toBe(false)
    expect(result.reason).toBe("schema valid (OpenReceipt v1): the value is neither JSON text nor standard padded base64 of a JSON envelope")
    expect(result.checks.map((c) => c.status)).toEqual(["fail", "skipped", "skipped", "skipped", "skipped"])
    expect((await verifyReceipt("{not json", { jwks })).reason).toBe("schema valid (OpenReceipt v1): the value is not valid JSON text")
  })

  it("a jwks option that is not a JWKS throws JwksError jwks_invalid", async () => {
    await expect(verifyReceipt(second, { jwks: { nope: true } as never })).rejects.toMatchObject({ name: "JwksError", code: "jwks_invalid" })
  })
})

describe("createJwksCache", () => {
  const gatewayUrl = "http://127.0.0.1:8080/"

  it("fetches GET /api/.well-known/service-receipt-pubkeys.jwks once and reuses it within the TTL", async () => {
    const server = jwksServer([jwks])
    const cache = createJwksCache({ gatewayUrl, fetch: server.fetch })
    for (let i = 0; i < 3; i++) expect((await verifyReceipt(first, { jwks: cache, nowSeconds: NOW_SECONDS })).valid).toBe(true)
    expect(server.calls).toEqual(["http://127.0.0.1:8080/api/.well-known/service-receipt-pubkeys.jwks"])
  })

  it("refetches after the TTL", async () => {
    let now = 0
    const server = jwksServer([jwks])
    const cache = createJwksCache({ gatewayUrl, fetch: server.fetch, ttlMs: 1000, now: () => now })
    await cache.get()
    now = 999
    await cache.get()
    now = 1000
    await cache.get()
    expect(server.calls.length).toBe(2)
  })

  it("kid rotation: a kid the cached set lacks triggers exactly one refetch, which finds the new key", async () => {
    const rotated = await makeKey()
    const newReceipt = await signReceiptV2(unsignedV2(), rotated.signer)
    const server = jwksServer([jwks, { keys: [rotated.jwk, key.jwk] }])
    const cache = createJwksCache({ gatewayUrl, fetch: server.fetch })
    expect((await verifyReceipt(first, { jwks: cache, nowSeconds: NOW_SECONDS })).valid).toBe(true)
    expect(server.calls.length).toBe(1)
    expect((await verifyReceipt(newReceipt, { jwks: cache, nowSeconds: NOW_SECONDS })).valid).toBe(true)
    expect(server.calls.length).toBe(2)
    // both keys are now cached: no further fetches
    expect((await verifyReceipt(first, { jwks: cache, nowSeconds: NOW_SECONDS })).valid).toBe(true)
    expect((await verifyReceipt(newReceipt, { jwks: cache, nowSeconds: NOW_SECONDS })).valid).toBe(true)
    expect(server.calls.length).toBe(2)
  })

  it("a kid nobody published: one refetch, then the receipt fails naming the kid", async () => {
    const stranger = await makeKey()
    const forged = await signReceiptV2(unsignedV2(), stranger.signer)
    const server = jwksServer([jwks])
    const cache = createJwksCache({ gatewayUrl, fetch: server.fetch })
    await cache.get()
    const result = await verifyReceipt(forged, { jwks: cache, nowSeconds: NOW_SECONDS })
    expect(result.reason).toBe(`signature: no published verification key has kid ${stranger.jwk.kid}`)
    expect(server.calls.length).toBe(2)
  })

  it("a first fetch that already misses the kid does not fetch twice", async () => {
    const stranger = await makeKey()
    const server = jwksServer([jwks])
    const cache = createJwksCache({ gatewayUrl, fetch: server.fetch })
    expect(await cache.resolveKey(stranger.jwk.kid)).toBeUndefined()
    expect(server.calls.length).toBe(1)
  })

  it("an unreachable gateway throws JwksError jwks_unreachable instead of calling the receipt invalid", async () => {
    const cache = createJwksCache({ gatewayUrl, fetch: (async () => { throw new TypeError("fetch failed") }) as typeof fetch })
    const error = await verifyReceipt(first, { jwks: cache, nowSeconds: NOW_SECONDS }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(JwksError)
    expect(error).toMatchObject({ code: "jwks_unreachable", status: undefined })
    expect((error as Error).message).toContain("could not be reached")
  })

  it("a gateway answering 503 or something that is not a JWKS throws a typed error with the status", async () => {
    await expect(createJwksCache({ gatewayUrl, fetch: jwksServer([{}], 503).fetch }).get()).rejects.toMatchObject({
      code: "jwks_unreachable",
      status: 503
    })
    await expect(createJwksCache({ gatewayUrl, fetch: jwksServer(["<html>"]).fetch }).get()).rejects.toMatchObject({ code: "jwks_invalid" })
    await expect(createJwksCache({ gatewayUrl, fetch: jwksServer([{ keys: "no" }]).fetch }).get()).rejects.toMatchObject({ code: "jwks_invalid" })
  })

  it("a failed fetch is not cached: the next call tries again", async () => {
    let fail = true
    const cache = createJwksCache({
      gatewayUrl,
      fetch: (async () => {
        if (fail) throw new TypeError("fetch failed")
        return new Response(JSON.stringify(jwks))
      }) as typeof fetch
    })
    await expect(cache.get()).rejects.toMatchObject({ code: "jwks_unreachable" })
    fail = false
    expect(await cache.get()).toEqual(jwks)
  })

  it("refuses plain http to a non-loopback host (the keys could be swapped on the way)", () => {
    expect(() => createJwksCache({ gatewayUrl: "http://relay.example.com" })).toThrow(
      expect.objectContaining({ name: "JwksError", code: "invalid_gateway_url" })
    )
    expect(() => createJwksCache({ gatewayUrl: "https://relay.example.com" })).not.toThrow()
  })
})
