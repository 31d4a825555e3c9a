import { describe, expect, it } from "vitest"
import { createPortalToken } from "../../../../layers/AdminOperations.ts"
import { createJwksCache, verifyChain, verifyInclusionProof, verifyReceipt } from "../../../../sdks/typescript/src/verify/index.ts"
import { attestedHeaders, relayChatAttested } from "../../../support/engine.ts"
import { useRelayFixture } from "../../../support/relayFixture.ts"
import { fundedKey } from "../../../support/tenant.ts"

/**
 * Receipts handed out by a real gateway verify OFFLINE with the SDK (keys from the gateway's JWKS through
 * createJwksCache, nothing else asked of the gateway): the v2 header, the stream trailer, the stored v1, the V3
 * countersignature and the failed-call receipt; tampered copies fail; chains of headers verify with verifyChain; a
 * receipt's transparency proof verifies against the signed tree head.
 */
const fx = useRelayFixture({ TRANSPARENCY_SEQUENCE_MS: "0" })

const chatBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: `Receipt me <EMAIL_1> ${crypto.randomUUID()}` }], ...extra })

const relay = (apiKey: string, body: string) => relayChatAttested(fx.gw.url, apiKey, body)

/** A fetch that counts the JWKS requests it passes on. */
const countingFetch = () => {
  const calls: Array<string> = []
  const counted = ((input: RequestInfo | URL, init?: RequestInit) => {
    calls.push(String(input))
    return fetch(input, init)
  }) as typeof fetch
  return { fetch: counted, calls }
}

const decode = (value: string) => JSON.parse(Buffer.from(value, "base64").toString("utf8")) as Record<string, unknown>

interface Collected {
  readonly v2Headers: Array<string>
  readonly trailer: Record<string, unknown>
  readonly v1: Record<string, unknown>
  readonly v3Header: string
  readonly attestation: string
  readonly failedHeaders: Array<string>
}

const collect = async (): Promise<Collected> => {
  const { apiKey, orgId } = await fundedKey(fx.gw)
  const v2Headers: Array<string> = []
  let v3Header = ""
  let attestation = ""
  for (let i = 0; i < 3; i++) {
    const ok = await relay(apiKey, chatBody())
    expect(ok.res.status).toBe(200)
    v2Headers.push(ok.res.headers.get("x-service-receipt-v2")!)
    v3Header = ok.res.headers.get("x-service-receipt-v3")!
    attestation = ok.attestation
  }
  const streamed = await relay(apiKey, chatBody({ stream: true }))
  const text = await streamed.res.text()
  const marker = "event: receipt-v2\ndata: "
  const trailer = JSON.parse(text.slice(text.indexOf(marker) + marker.length).trim().split("\n")[0]!)
  const { token } = await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:keys.read" }))
  const jti = decode(v2Headers[0]!).jti as string
  const stored = await fetch(`${fx.gw.url}/api/v1/receipts/${jti}`, { headers: { authorization: `Bearer ${token}` } })
  expect(stored.status).toBe(200)
  const failedHeaders: Array<string> = []
  for (let i = 0; i < 3; i++) {
    const refused = await relay(apiKey, chatBody({ model: "no-such-model" }))
    expect(refused.res.status).toBe(404)
    failedHeaders.push(refused.res.headers.get("x-service-receipt-failed")!)
  }
  return { v2Headers, trailer, v1: await stored.json(), v3Header, attestation, failedHeaders }
}

let collected: Promise<Collected> | undefined
const receipts = () => (collected ??= collect())

describe("SDK verification against receipts from a real gateway", () => {
  it("every kind verifies offline; a tampered copy of each fails at the signature", async () => {
    const c = await receipts()
    const cache = createJwksCache({ gatewayUrl: fx.gw.url })
    const kinds: Array<[string, string | Record<string, unknown>, string, unknown]> = [
      ["X-Service-Receipt-V2 header", c.v2Headers[2]!, "output_tokens", 999_999],
      ["receipt-v2 stream trailer", c.trailer, "model", "gpt-4o"],
      ["stored v1", c.v1, "sub", "svc_someone"],
      ["X-Service-Receipt-V3 countersignature", c.v3Header, "provider", "openai"],
      ["X-Service-Receipt-Failed", c.failedHeaders[2]!, "error_code", "rate_limited"]
    ]
    for (const [name, sent, member, value] of kinds) {
      const result = await verifyReceipt(sent, { jwks: cache })
      expect({ name, valid: result.valid, reason: result.reason }).toEqual({ name, valid: true, reason: null })
      const envelope = typeof sent === "string" ? decode(sent) : sent
      const tampered = await verifyReceipt({ ...envelope, [member]: value }, { jwks: cache })
      expect({ name, reason: tampered.reason }).toEqual({ name, reason: expect.stringMatching(/^signature: does not verify with key /) })
    }
  })

  it("a countersignature is bound to the attestation it was issued for", async () => {
    const c = await receipts()
    const cache = createJwksCache({ gatewayUrl: fx.gw.url })
    const bound = await verifyReceipt(c.v3Header, { jwks: cache, attestation: c.attestation })
    expect(bound.checks[4]!.detail).toMatch(/^countersigns the supplied attestation [0-9a-f]{32}$/)
    const other = (await attestedHeaders("chat.completions", chatBody()))["x-service-attestation"]
    expect((await verifyReceipt(c.v3Header, { jwks: cache, attestation: other })).reason).toMatch(
      /^chain linkage \(seq and prev_hash\): countersigns attestation [0-9a-f]{32}, not [0-9a-f]{32}$/
    )
  })

  it("consecutive v2 and failed receipts verify as chains; a gap is found at its position", async () => {
    const c = await receipts()
    const cache = createJwksCache({ gatewayUrl: fx.gw.url })
    expect(await verifyChain(c.v2Headers, { jwks: cache })).toMatchObject({ valid: true, firstSeq: 1, lastSeq: 3, verified: 3 })
    expect(await verifyChain(c.failedHeaders, { jwks: cache })).toMatchObject({ valid: true, firstSeq: 1, lastSeq: 3 })
    const gap = await verifyChain([c.v2Headers[0]!, c.v2Headers[2]!], { jwks: cache })
    expect(gap.break).toMatchObject({ index: 1, seq: 3, reason: "chain linkage (seq and prev_hash): seq 3 does not follow previous seq 1" })
  })

  it("an unknown kid triggers exactly one JWKS refetch; known kids are served from the cache", async () => {
    const c = await receipts()
    const counter = countingFetch()
    const cache = createJwksCache({ gatewayUrl: fx.gw.url, fetch: counter.fetch })
    expect((await verifyReceipt(c.v2Headers[0]!, { jwks: cache })).valid).toBe(true)
    expect((await verifyReceipt(c.failedHeaders[0]!, { jwks: cache })).valid).toBe(true)
    expect(counter.calls).toEqual([`${fx.gw.url}/api/.well-known/service-receipt-pubkeys.jwks`])
    const unknown = await verifyReceipt({ ...decode(c.v2Headers[0]!), kid: "rotated-key-not-yet-cached" }, { jwks: cache })
    expect(unknown.reason).toBe("signature: no published verification key has kid rotated-key-not-yet-cached")
    expect(counter.calls.length).toBe(2)
  })

  it("a receipt's transparency proof verifies against the gateway's signed tree head", async () => {
    const c = await receipts()
    const cache = createJwksCache({ gatewayUrl: fx.gw.url })
    const receipt = decode(c.v2Headers[1]!)
    const proofRes = await fetch(`${fx.gw.url}/api/v1/transparency/proof/${receipt.jti as string}`)
    expect(proofRes.status).toBe(200)
    const proof = await proofRes.json()
    const sth = await (await fetch(`${fx.gw.url}/api/v1/transparency/sth`)).json()
    expect(await verifyInclusionProof(proof, proof.sth, { jwks: cache, receipt })).toMatchObject({ valid: true, reason: null })
    // no receipt was sealed between the two requests, so the current head is the proof's head
    expect(sth.tree_size).toBe(proof.tree_size)
    expect((await verifyInclusionProof(proof, sth, { jwks: cache })).valid).toBe(true)
    const forged = { ...proof, audit_path: proof.audit_path.map(() => "ab".repeat(32)) }
    expect((await verifyInclusionProof(forged, null, { jwks: cache })).valid).toBe(false)
    expect((await verifyInclusionProof(proof, null, { jwks: cache, receipt: decode(c.v2Headers[0]!) })).reason).toMatch(/^leaf hash: the proof is for receipt /)
  })

  it("a gateway that is down gives a typed JwksError, not an invalid receipt", async () => {
    const c = await receipts()
    const cache = createJwksCache({ gatewayUrl: "http://127.0.0.1:9" })
    await expect(verifyReceipt(c.v2Headers[0]!, { jwks: cache })).rejects.toMatchObject({ name: "JwksError", code: "jwks_unreachable" })
  })
})
