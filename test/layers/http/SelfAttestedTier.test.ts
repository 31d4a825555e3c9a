import { describe, expect, it } from "vitest"
import { buildAttestation, encodeAttestationHeader } from "../../../sdks/typescript/src/wire/attestation/v3.ts"
import { generateSigningKeyPair } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { useRelayFixture } from "../../support/relayFixture.ts"
import { fundedKey } from "../../support/tenant.ts"

const fx = useRelayFixture()

/**
 * The limit docs/relay.md ("What fail-closed enforces") and the README state: the trust tier is self-attested, so
 * the gateway checks the signature and the body hash, not that the body was tokenised. If this test starts failing
 * because the gateway gained a stronger check, update those docs with it.
 */
describe("trust tier self-attested: what fail-closed does not enforce", () => {
  it("relays an untokenised body that a raw REST caller signed with its own, never-seen key", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const body = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "Mail jane.doe@example.com" }] })
    const attestation = await buildAttestation({
      route: "chat.completions",
      bodyBytes: new TextEncoder().encode(body),
      detectorsFired: {},
      engine: { id: "relay-ts", version: "0.1.0", sha256: "0".repeat(64) },
      keyPair: await generateSigningKeyPair()
    })
    expect(attestation.claims["v3-attestation"].trust_tier).toBe("self-attested")
    const res = await fetch(`${fx.gw.url}/api/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        "x-service-engine": "relay-ts/0.1.0",
        "x-service-attestation": encodeAttestationHeader(attestation)
      },
      body
    })
    expect(res.status).toBe(200)
    expect((await res.json()).choices[0].message.content).toBe("Echo: Mail jane.doe@example.com")
    expect(fx.provider.received).toHaveLength(1)
    expect(fx.provider.received[0].body.toString("utf8")).toContain("jane.doe@example.com")
  })

  it("still refuses the same body without an attestation, or with the body changed after signing, forwarding nothing", async () => {
    const { apiKey } = await fundedKey(fx.gw)
    const signed = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "Mail <EMAIL_1_abcd>" }] })
    const sent = JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "Mail jane.doe@example.com" }] })
    const attestation = await buildAttestation({
      route: "chat.completions",
      bodyBytes: new TextEncoder().encode(signed),
      detectorsFired: { EMAIL: 1 },
      engine: { id: "relay-ts", version: "0.1.0", sha256: "0".repeat(64) },
      keyPair: await generateSigningKeyPair()
    })
    const call = (headers: Record<string, string>) =>
      fetch(`${fx.gw.url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...headers },
        body: sent
      })
    const unattested = await call({ "x-service-engine": "relay-ts/0.1.0" })
    expect(unattested.status).toBe(428)
    expect((await unattested.json()).error.code).toBe("pretokenised_required")
    const changed = await call({ "x-service-engine": "relay-ts/0.1.0", "x-service-attestation": encodeAttestationHeader(attestation) })
    expect(changed.status).toBe(428)
    expect((await changed.json()).error.code).toBe("pretokenised_required")
    expect(fx.provider.received).toHaveLength(0)
  })
})
