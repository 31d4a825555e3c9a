import { describe, expect, it } from "vitest"
import { createPortalToken } from "../../../layers/AdminOperations.ts"
import { attestedHeaders, relayChatAttested } from "../../support/engine.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

/**
 * Issue 14 item 8: every receipt the gateway hands out verifies at its own POST /api/v1/receipts/verify, and a
 * tampered copy of each fails with a reason naming the failed check. Kinds: the X-Service-Receipt-V2 header, the
 * receipt-v2 stream trailer, the stored v1 (GET /api/v1/receipts/{jti}), the X-Service-Receipt-V3 countersignature,
 * X-Service-Receipt-Failed, and the answer of POST /api/v1/receipts/countersign.
 */
const fx = useRelayFixture()

const LABELS = [
  "schema valid (OpenReceipt v1)",
  "algorithm allow-listed",
  "freshness (iat, nbf, exp)",
  "signature",
  "chain linkage (seq and prev_hash)"
]

const chatBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: `Receipt me <EMAIL_1> ${crypto.randomUUID()}` }], ...extra })

const relay = (apiKey: string, body: string) => relayChatAttested(fx.gw.url, apiKey, body)

const verify = async (body: unknown) => {
  const res = await fetch(`${fx.gw.url}/api/v1/receipts/verify`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: res.status, result: await res.json() }
}

const decodeHeader = (value: string | null) => {
  expect(value).not.toBeNull()
  return JSON.parse(Buffer.from(value!, "base64").toString("utf8")) as Record<string, unknown>
}

interface Kind {
  /** What to send as `receipt`: the header value where the gateway hands out a header, else the envelope. */
  readonly sent: unknown
  readonly envelope: Record<string, unknown>
  /** A signed member to change, and its new value. */
  readonly tamper: readonly [string, unknown]
  readonly attestation?: string
}

/** Relays calls and collects one receipt of every kind the gateway hands out. */
const collectEveryKind = async (): Promise<Record<string, Kind>> => {
  const { apiKey, orgId } = await fundedKey(fx.gw)

  const ok = await relay(apiKey, chatBody())
  expect(ok.res.status).toBe(200)
  const v2Header = ok.res.headers.get("x-service-receipt-v2")!
  const v3Header = ok.res.headers.get("x-service-receipt-v3")!
  const v2 = decodeHeader(v2Header)
  const jti = ok.res.headers.get("x-service-receipt-v2-jti")!
  expect(jti).toBe(v2.jti)

  const streamed = await relay(apiKey, chatBody({ stream: true }))
  expect(streamed.res.status).toBe(200)
  const text = await streamed.res.text()
  const trailer = JSON.parse(text.slice(text.indexOf("event: receipt-v2\ndata: ") + "event: receipt-v2\ndata: ".length).trim())

  const { token } = await fx.gw.runtime.runPromise(createPortalToken({ org_id: orgId, abilities: "ability:keys.read" }))
  const stored = await fetch(`${fx.gw.url}/api/v1/receipts/${jti}`, { headers: { authorization: `Bearer ${token}` } })
  expect(stored.status).toBe(200)
  const v1 = await stored.json()

  // two failed calls, so the second receipt's link to the first (stored) one is checked too
  for (let i = 0; i < 2; i++) expect((await relay(apiKey, chatBody({ model: "no-such-model" }))).res.status).toBe(404)
  const refused = await relay(apiKey, chatBody({ model: "no-such-model" }))
  const failedHeader = refused.res.headers.get("x-service-receipt-failed")!
  const failed = decodeHeader(failedHeader)
  expect((failed.chain as { seq: number }).seq).toBe(3)

  const v3 = decodeHeader(v3Header)
  const answer = await fetch(`${fx.gw.url}/api/v1/receipts/countersign`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      attestation: ok.attestation,
      provider: v2.provider,
      model: v2.model,
      hash_upstream_request: v2.hash_upstream_request,
      hash_upstream_response: v2.hash_upstream_response
    })
  })
  expect(answer.status).toBe(200)
  const countersigned = await answer.json()
  expect(countersigned).toMatchObject({ v: "v3-countersignature", witness: "relayed", receipt_jti: jti })

  return {
    "X-Service-Receipt-V2 header": { sent: v2Header, envelope: v2, tamper: ["output_tokens", 999_999] },
    "receipt-v2 stream trailer": { sent: trailer, envelope: trailer, tamper: ["model", "gpt-4o"] },
    "stored v1 by jti": { sent: v1, envelope: v1, tamper: ["sub", "svc_someone"] },
    "X-Service-Receipt-V3 countersignature": { sent: v3Header, envelope: v3, tamper: ["provider", "openai"], attestation: ok.attestation },
    "X-Service-Receipt-Failed": { sent: failedHeader, envelope: failed, tamper: ["error_code", "rate_limited"] },
    "the countersign route's answer": { sent: countersigned, envelope: countersigned, tamper: ["witness", "asserted"], attestation: ok.attestation }
  }
}

describe("POST /api/v1/receipts/verify accepts every receipt the gateway hands out", () => {
  let kinds: Record<string, Kind>
  const kind = async (name: string) => (kinds ??= await collectEveryKind())[name]!

  it.each([
    "X-Service-Receipt-V2 header",
    "receipt-v2 stream trailer",
    "stored v1 by jti",
    "X-Service-Receipt-V3 countersignature",
    "X-Service-Receipt-Failed",
    "the countersign route's answer"
  ])("%s: valid as handed out; a tampered copy fails at the signature with a clear reason", async (name) => {
    const { sent, envelope, tamper, attestation } = await kind(name)

    const { status, result } = await verify({ receipt: sent })
    expect({ status, reason: result.reason }).toEqual({ status: 200, reason: null })
    expect(result.checks.map((c: { label: string }) => c.label)).toEqual(LABELS)
    expect(result.checks.every((c: { status: string }) => c.status === "ok")).toBe(true)
    // shape A (the envelope as the root) answers the same
    expect((await verify(envelope)).status).toBe(200)

    const [member, value] = tamper
    expect(envelope[member]).not.toEqual(value)
    const tampered = await verify({ ...envelope, [member]: value })
    expect(tampered.status).toBe(422)
    expect(tampered.result.valid).toBe(false)
    expect(tampered.result.reason).toMatch(/^signature: does not verify with key /)

    if (attestation !== undefined) {
      // a countersignature names the attestation it countersigns: given that attestation, the binding is checked
      const bound = await verify({ receipt: sent, attestation })
      expect(bound.status).toBe(200)
      expect(bound.result.checks[4].detail).toMatch(/^countersigns the supplied attestation [0-9a-f]{32}$/)
      const other = (await attestedHeaders("chat.completions", chatBody()))["x-service-attestation"]
      const unbound = await verify({ receipt: sent, attestation: other })
      expect(unbound.status).toBe(422)
      expect(unbound.result.reason).toMatch(/^chain linkage \(seq and prev_hash\): countersigns attestation [0-9a-f]{32}, not [0-9a-f]{32}$/)
    }
  })

  it("a countersignature whose hashes disagree with each other fails the schema check, naming the member", async () => {
    const { envelope } = await kind("X-Service-Receipt-V3 countersignature")
    const { status, result } = await verify({ ...envelope, hash_upstream_request: "0".repeat(64) })
    expect(status).toBe(422)
    expect(result.reason).toBe("schema valid (OpenReceipt v1): v3-countersignature envelope: hash_upstream_request must equal the attested egress_sha256")
  })

  it("an unknown version still answers 422 naming the versions it knows", async () => {
    const { envelope } = await kind("X-Service-Receipt-V3 countersignature")
    const { status, result } = await verify({ ...envelope, v: "v4" })
    expect(status).toBe(422)
    expect(result.reason).toMatch(/unknown envelope version .*"v3-countersignature"/)
  })
})
