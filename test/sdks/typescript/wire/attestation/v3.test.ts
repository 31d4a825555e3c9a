import canonicalize from "canonicalize"
import { importJWK } from "jose"
import { describe, expect, it } from "vitest"
import {
  buildAttestation,
  decodeAttestationHeader,
  encodeAttestationHeader,
  engineHeaderValue,
  verifyAttestation,
  type AttestationRoute,
  type EngineIdentity,
  type V3Envelope
} from "../../../../../sdks/typescript/src/wire/attestation/v3.ts"
import type { EngineAllowlist } from "../../../../../sdks/typescript/src/wire/attestation/engine-allowlist.ts"
import { base64UrlDecode } from "../../../../../sdks/typescript/src/wire/crypto/base64.ts"
import { exportPublicJwk, generateSigningKeyPair } from "../../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { jsonBodySha256Hex, sha256Hex } from "../../../../../sdks/typescript/src/wire/crypto/jcs.ts"
import { signEnvelope } from "../../../../../sdks/typescript/src/wire/receipts/signer.ts"
import { signRaw } from "../../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)
const SECRET = "SECRET-CONTENT-7731"
const body = utf8(JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: `hello <EMAIL_1> ${SECRET}` }] }))
const ENGINE: EngineIdentity = { id: "relay-ts", version: "0.1.0", sha256: "a".repeat(64) }
const NOW = new Date("2025-01-01T00:00:00.000Z")
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000)
const keyPair = await generateSigningKeyPair()

const attest = (overrides: { route?: AttestationRoute; engine?: EngineIdentity; now?: Date; bodyBytes?: Uint8Array } = {}) =>
  buildAttestation({
    route: overrides.route ?? "chat.completions",
    bodyBytes: overrides.bodyBytes ?? body,
    detectorsFired: { EMAIL: 1 },
    engine: overrides.engine ?? ENGINE,
    keyPair,
    now: overrides.now ?? NOW
  })

const check = (header: string | undefined, options: {
  engineHeader?: string | undefined
  route?: AttestationRoute
  bodyBytes?: Uint8Array
  nowSeconds?: number
  allowlist?: EngineAllowlist
} = {}) =>
  verifyAttestation({
    header,
    engineHeader: "engineHeader" in options ? options.engineHeader : "relay-ts/0.1.0",
    route: options.route ?? "chat.completions",
    bodyBytes: options.bodyBytes ?? body,
    nowSeconds: options.nowSeconds ?? NOW_SECONDS,
    ...(options.allowlist === undefined ? {} : { allowlist: options.allowlist })
  })

/** Re-signs a modified envelope with the test key, as a malicious-but-keyed client could. */
const resign = async (envelope: Record<string, unknown>): Promise<V3Envelope> => {
  const { sig: _sig, ...unsigned } = envelope
  return { ...(unsigned as object), sig: await signEnvelope(unsigned, (b) => signRaw(keyPair.privateKey, b)) } as V3Envelope
}

describe("buildAttestation", () => {
  it("produces exactly the v3 envelope of docs/relay.md", async () => {
    const envelope = await attest()
    expect(Object.keys(envelope).sort()).toEqual(["alg", "claims", "iat", "jti", "sig", "v"])
    expect(envelope.v).toBe("v3")
    expect(envelope.alg).toBe("ecdsa-p256-sha256")
    expect(envelope.jti).toMatch(/^[0-9a-f]{32}$/)
    expect(envelope.iat).toBe(NOW_SECONDS)
    expect(Object.keys(envelope.claims)).toEqual(["v3-attestation"])
    const claims = envelope.claims["v3-attestation"]
    expect(claims).toEqual({
      route: "chat.completions",
      egress_sha256: await jsonBodySha256Hex(body),
      detectors_fired: { EMAIL: 1 },
      engine: ENGINE,
      trust_tier: "self-attested",
      attester_public_key: await exportPublicJwk(keyPair.publicKey)
    })
    expect(envelope.sig).toMatch(/^[A-Za-z0-9_-]{86}$/)
  })

  it("egress_sha256 is the SHA-256 of the JCS form of the parsed body", async () => {
    const envelope = await attest()
    const independent = await sha256Hex(canonicalize(JSON.parse(new TextDecoder().decode(body)))!)
    expect(envelope.claims["v3-attestation"].egress_sha256).toBe(independent)
  })

  it("sig verifies independently: WebCrypto and a jose-imported key over JCS of the envelope without sig", async () => {
    const envelope = await attest()
    const { sig, ...unsigned } = envelope
    const signedBytes = utf8(canonicalize(unsigned)!)
    const jwk = envelope.claims["v3-attestation"].attester_public_key
    const webKey = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"])
    const joseKey = (await importJWK(jwk, "ES256")) as CryptoKey
    for (const key of [webKey, joseKey]) {
      expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, base64UrlDecode(sig) as Uint8Array<ArrayBuffer>, signedBytes)).toBe(true)
    }
  })

  it("refuses a body that is not JSON", async () => {
    await expect(attest({ bodyBytes: utf8("plain text") })).rejects.toThrow()
  })
})

describe("attestation header", () => {
  it("is standard padded base64 of the envelope JSON and decodes back", async () => {
    const envelope = await attest()
    const header = encodeAttestationHeader(envelope)
    expect(header).toMatch(/^[A-Za-z0-9+/]+={0,2}$/)
    expect(header.length % 4).toBe(0)
    expect(JSON.parse(Buffer.from(header, "base64").toString("utf8"))).toEqual(envelope)
    expect(decodeAttestationHeader(header)).toEqual(envelope)
  })
})

describe("verifyAttestation (fail-closed gate)", () => {
  it("accepts a fresh attestation for this route, engine and body", async () => {
    const envelope = await attest()
    const verdict = await check(encodeAttestationHeader(envelope))
    expect(verdict).toEqual({ ok: true, attestation: envelope, engine: ENGINE, envelopeJcs: expect.any(Function) })
  })

  it("answers the whole envelope's JCS text (what a countersignature's attestation_sha256 hashes), sig included", async () => {
    const envelope = await attest()
    const verdict = await check(encodeAttestationHeader(envelope))
    if (!verdict.ok) throw new Error(verdict.message)
    // The independent `canonicalize` package over the decoded envelope, signature member and all.
    expect(verdict.envelopeJcs()).toBe(canonicalize(envelope))
    expect(verdict.envelopeJcs()).toContain(`"sig":"${envelope.sig}"`)
  })

  it("accepts the same body re-serialised with other key order and whitespace", async () => {
    const reformatted = utf8(JSON.stringify({ messages: JSON.parse(new TextDecoder().decode(body)).messages, model: "local-chat" }, null, 2))
    const verdict = await check(encodeAttestationHeader(await attest()), { bodyBytes: reformatted })
    expect(verdict.ok).toBe(true)
  })

  it("answers 403 engine_untrusted before looking at the attestation", async () => {
    for (const engineHeader of [undefined, "relay-evil/1.0.0", "relay-ts/0.0.1", "garbage"]) {
      const verdict = await check(undefined, { engineHeader })
      expect(verdict).toMatchObject({ ok: false, status: 403, code: "engine_untrusted" })
    }
  })

  const expect428 = async (verdict: Awaited<ReturnType<typeof check>>, message: RegExp) => {
    expect(verdict).toMatchObject({ ok: false, status: 428, code: "pretokenised_required" })
    if (!verdict.ok) {
      expect(verdict.message).toMatch(message)
      expect(verdict.message).not.toContain(SECRET)
    }
  }

  it("428 when the attestation header is missing or empty", async () => {
    await expect428(await check(undefined), /missing/)
    await expect428(await check("   "), /missing/)
  })

  it("428 when the header is not base64 JSON", async () => {
    await expect428(await check("%%%not-base64%%%"), /not standard padded base64/)
    await expect428(await check(Buffer.from("not json").toString("base64")), /not standard padded base64/)
  })

  it("428 when the decoded JSON is not a v3 envelope", async () => {
    const envelope = await attest()
    await expect428(await check(Buffer.from(JSON.stringify({ ...envelope, v: "v2" })).toString("base64")), /not a v3 envelope: v must be/)
    const noKey = structuredClone(envelope) as unknown as { claims: { "v3-attestation": Record<string, unknown> } }
    delete noKey.claims["v3-attestation"].attester_public_key
    await expect428(await check(Buffer.from(JSON.stringify(noKey)).toString("base64")), /attester_public_key/)
  })

  it("428 when the signature does not verify (tampered claim, foreign key, swapped sig)", async () => {
    const envelope = await attest()
    const tampered = structuredClone(envelope) as unknown as { claims: { "v3-attestation": { detectors_fired: Record<string, number> } } }
    tampered.claims["v3-attestation"].detectors_fired = {}
    await expect428(await check(Buffer.from(JSON.stringify(tampered)).toString("base64")), /signature does not verify/)

    const otherKey = await exportPublicJwk((await generateSigningKeyPair()).publicKey)
    const foreign = { ...envelope, claims: { "v3-attestation": { ...envelope.claims["v3-attestation"], attester_public_key: otherKey } } }
    await expect428(await check(encodeAttestationHeader(foreign)), /signature does not verify/)

    const otherSig = (await attest()).sig
    await expect428(await check(encodeAttestationHeader({ ...envelope, sig: otherSig })), /signature does not verify/)
  })

  it("428 when alg is not ecdsa-p256-sha256", async () => {
    const envelope = await resign({ ...(await attest()), alg: "none" })
    await expect428(await check(encodeAttestationHeader(envelope)), /alg/)
  })

  it("428 when the body differs from egress_sha256, including whitespace inside a string", async () => {
    const header = encodeAttestationHeader(await attest())
    const changed = utf8(new TextDecoder().decode(body).replace("hello ", "hello  "))
    await expect428(await check(header, { bodyBytes: changed }), /does not match the attested egress_sha256/)
  })

  it("428 when the body is not JSON (it has no JCS form to hash)", async () => {
    const header = encodeAttestationHeader(await attest())
    await expect428(await check(header, { bodyBytes: utf8(`{"broken": ${SECRET}`) }), /not JSON/)
  })

  it("428 when iat is more than 300 s off, in either direction; 300 s is accepted", async () => {
    const header = encodeAttestationHeader(await attest())
    await expect428(await check(header, { nowSeconds: NOW_SECONDS + 301 }), /iat/)
    await expect428(await check(header, { nowSeconds: NOW_SECONDS - 301 }), /iat/)
    expect((await check(header, { nowSeconds: NOW_SECONDS + 300 })).ok).toBe(true)
    expect((await check(header, { nowSeconds: NOW_SECONDS - 300 })).ok).toBe(true)
  })

  it("428 when the attested route differs from the route called", async () => {
    const header = encodeAttestationHeader(await attest({ route: "messages" }))
    await expect428(await check(header, { route: "chat.completions" }), /route messages, not chat\.completions/)
  })

  it("428 when X-Service-Engine differs from the attested engine", async () => {
    const header = encodeAttestationHeader(await attest({ engine: { ...ENGINE, version: "0.2.0" } }))
    await expect428(await check(header, { engineHeader: "relay-ts/0.1.0" }), /differs from the attested engine relay-ts\/0\.2\.0/)
    expect((await check(header, { engineHeader: engineHeaderValue(ENGINE).replace("0.1.0", "0.2.0") })).ok).toBe(true)
  })

  it("checks engine.sha256 only when the allowlist entry pins hashes", async () => {
    const header = encodeAttestationHeader(await attest())
    const pinnedOther: EngineAllowlist = [{ id: "relay-ts", minVersion: "0.1.0", sha256: ["b".repeat(64)] }]
    await expect428(await check(header, { allowlist: pinnedOther }), /not a pinned build/)
    const pinnedOurs: EngineAllowlist = [{ id: "relay-ts", minVersion: "0.1.0", sha256: ["b".repeat(64), ENGINE.sha256] }]
    expect((await check(header, { allowlist: pinnedOurs })).ok).toBe(true)
    expect((await check(header, { allowlist: [{ id: "relay-ts", minVersion: "0.1.0", sha256: [] }] })).ok).toBe(true)
  })
})
