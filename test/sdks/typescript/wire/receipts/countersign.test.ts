import { describe, expect, it } from "vitest"
import { buildAttestation } from "../../../../../sdks/typescript/src/wire/attestation/v3.ts"
import { generateSigningKeyPair } from "../../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { jsonBodySha256Hex } from "../../../../../sdks/typescript/src/wire/crypto/jcs.ts"
import { envelopeHash } from "../../../../../sdks/typescript/src/wire/receipts/chain.ts"
import { countersignAttestation, type CountersignTranslation, countersignatureShapeProblem } from "../../../../../sdks/typescript/src/wire/receipts/countersign.ts"
import { verifyCountersignature } from "../../../../../sdks/typescript/src/wire/receipts/verify.ts"
import { makeKey } from "./fixtures.ts"

const body = new TextEncoder().encode(JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hi <PERSON_1>" }] }))
const attest = async () =>
  buildAttestation({
    route: "chat.completions",
    bodyBytes: body,
    detectorsFired: { PERSON: 1 },
    engine: { id: "relay-ts", version: "0.1.0", sha256: "a".repeat(64) },
    keyPair: await generateSigningKeyPair()
  })

describe("countersignAttestation", () => {
  it("binds the attestation by jti and hash and verifies with the gateway key", async () => {
    const key = await makeKey()
    const attestation = await attest()
    const hash = await jsonBodySha256Hex(body)
    const cs = await countersignAttestation({
      attestation,
      provider: "local",
      model: "local-chat",
      hashUpstreamRequest: hash,
      hashUpstreamResponse: "b".repeat(64),
      iss: "http://127.0.0.1:8080",
      signer: key.signer
    })
    expect(cs).toMatchObject({
      v: "v3-countersignature",
      alg: "ES256",
      kid: key.signer.kid,
      attestation_jti: attestation.jti,
      attestation_sha256: await envelopeHash(attestation),
      egress_sha256: hash,
      witness: "relayed",
      receipt_jti: null
    })
    const resolveKey = async (kid: string) => (kid === key.signer.kid ? key.pair.publicKey : undefined)
    expect(await verifyCountersignature(cs, { resolveKey, attestation })).toBe(true)
    expect(await verifyCountersignature({ ...cs, model: "other" }, { resolveKey })).toBe(false)
    expect(await verifyCountersignature(cs, { resolveKey, attestation: await attest() })).toBe(false)
    expect(await verifyCountersignature(cs, { resolveKey: async () => undefined })).toBe(false)
  })

  it("refuses to countersign a body other than the attested one", async () => {
    const key = await makeKey()
    await expect(countersignAttestation({
      attestation: await attest(),
      provider: "local",
      model: "local-chat",
      hashUpstreamRequest: "c".repeat(64),
      hashUpstreamResponse: "b".repeat(64),
      iss: "x",
      signer: key.signer
    })).rejects.toThrow(/egress_sha256/)
  })

  it("countersigns a translated call: hash_upstream_request may differ from egress_sha256 only with a translation member", async () => {
    const key = await makeKey()
    const attestation = await attest()
    const resolveKey = async (kid: string) => (kid === key.signer.kid ? key.pair.publicKey : undefined)
    const cs = await countersignAttestation({
      attestation,
      provider: "anthropic",
      model: "claude-haiku-4-5-20251001",
      hashUpstreamRequest: "c".repeat(64),
      hashUpstreamResponse: "b".repeat(64),
      iss: "http://127.0.0.1:8080",
      signer: key.signer,
      translation: { from: "openai", to: "anthropic" }
    })
    expect(cs).toMatchObject({ egress_sha256: await jsonBodySha256Hex(body), hash_upstream_request: "c".repeat(64), translation: { from: "openai", to: "anthropic" } })
    expect(await verifyCountersignature(cs, { resolveKey, attestation })).toBe(true)
    // The member is signed: dropping it (to pass the translated hash off as the attested body's) breaks the envelope.
    const { translation: _dropped, ...withoutTranslation } = cs
    expect(await verifyCountersignature(withoutTranslation, { resolveKey, attestation })).toBe(false)
    const bogus = await countersignAttestation({
      attestation,
      provider: "anthropic",
      model: "m",
      hashUpstreamRequest: "c".repeat(64),
      hashUpstreamResponse: "b".repeat(64),
      iss: "x",
      signer: key.signer,
      translation: { from: "openai", to: "openai" }
    })
    expect(await verifyCountersignature(bogus, { resolveKey, attestation })).toBe(false)
  })

  it("accepts any wire-format name as the upstream format, and only a client format as the client's", async () => {
    const key = await makeKey()
    const attestation = await attest()
    const resolveKey = async (kid: string) => (kid === key.signer.kid ? key.pair.publicKey : undefined)
    const sign = (translation: { from: string; to: string }) =>
      countersignAttestation({
        attestation,
        provider: "google",
        model: "gemini-2.5-flash",
        hashUpstreamRequest: "c".repeat(64),
        hashUpstreamResponse: "b".repeat(64),
        iss: "http://127.0.0.1:8080",
        signer: key.signer,
        translation: translation as CountersignTranslation
      })
    // Gemini's own format, and one this verifier has never heard of: both are what went upstream.
    for (const to of ["gemini", "bedrock-converse"]) {
      expect(await verifyCountersignature(await sign({ from: "anthropic", to }), { resolveKey, attestation })).toBe(true)
    }
    for (const bad of [{ from: "gemini", to: "openai" }, { from: "openai", to: "Gemini" }, { from: "openai", to: "" }]) {
      const cs = await sign(bad)
      expect(countersignatureShapeProblem(cs as unknown as Record<string, unknown>)).toBe("translation must be { from, to } naming two different wire formats")
      expect(await verifyCountersignature(cs, { resolveKey, attestation })).toBe(false)
    }
  })
})
