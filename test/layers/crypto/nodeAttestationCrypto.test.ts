// The gateway's node:crypto attestation backend must give verifyAttestation exactly the verdicts (and
// messages) of the portable WebCrypto default, for valid and for every kind of broken attestation.
import { describe, expect, it } from "vitest"
import { nodeAttestationCrypto } from "../../../layers/crypto/nodeAttestationCrypto.ts"
import {
  buildAttestation,
  encodeAttestationHeader,
  verifyAttestation,
  verifyV3Signature,
  type AttestationCrypto,
  type EngineIdentity,
  type V3Envelope
} from "../../../sdks/typescript/src/wire/attestation/v3.ts"
import { base64UrlDecode, base64UrlEncode } from "../../../sdks/typescript/src/wire/crypto/base64.ts"
import { exportPublicJwk, generateSigningKeyPair, signRaw } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { signEnvelope } from "../../../sdks/typescript/src/wire/receipts/signer.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)
const body = utf8(JSON.stringify({ model: "local-chat", messages: [{ role: "user", content: "hello <EMAIL_1> Grüße 😀" }] }))
const ENGINE: EngineIdentity = { id: "relay-ts", version: "0.1.0", sha256: "a".repeat(64) }
const NOW = new Date("2025-01-01T00:00:00.000Z")
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000)
const keyPair = await generateSigningKeyPair()
const otherPair = await generateSigningKeyPair()
const attestation = await buildAttestation({
  route: "chat.completions",
  bodyBytes: body,
  detectorsFired: { EMAIL: 1 },
  engine: ENGINE,
  keyPair,
  now: NOW
})

const resign = async (envelope: Record<string, unknown>, pair: CryptoKeyPair): Promise<V3Envelope> => {
  const { sig: _sig, ...unsigned } = envelope
  return { ...(unsigned as object), sig: await signEnvelope(unsigned, (b) => signRaw(pair.privateKey, b)) } as V3Envelope
}

const withSig = (sig: string): V3Envelope => ({ ...attestation, sig })
const claims = attestation.claims["v3-attestation"]
const withClaims = (patch: Record<string, unknown>): Record<string, unknown> => ({
  ...attestation,
  claims: { "v3-attestation": { ...claims, ...patch } }
})
const sigBytes = base64UrlDecode(attestation.sig)
const flippedSig = Uint8Array.from(sigBytes)
flippedSig[10] ^= 0x01

const cases: Array<{ name: string; header: string | undefined; bodyBytes?: Uint8Array; ok: boolean }> = [
  { name: "valid", header: encodeAttestationHeader(attestation), ok: true },
  { name: "missing header", header: undefined, ok: false },
  { name: "tampered body", header: encodeAttestationHeader(attestation), bodyBytes: utf8('{"model":"local-chat"}'), ok: false },
  { name: "body not JSON", header: encodeAttestationHeader(attestation), bodyBytes: utf8("not json"), ok: false },
  { name: "flipped signature bit", header: encodeAttestationHeader(withSig(base64UrlEncode(flippedSig))), ok: false },
  { name: "65-byte signature", header: encodeAttestationHeader(withSig(base64UrlEncode(Uint8Array.of(...sigBytes, 0)))), ok: false },
  { name: "63-byte signature", header: encodeAttestationHeader(withSig(base64UrlEncode(sigBytes.subarray(0, 63)))), ok: false },
  { name: "sig not base64url", header: encodeAttestationHeader(withSig("!!!not base64!!!")), ok: false },
  { name: "zero signature", header: encodeAttestationHeader(withSig(base64UrlEncode(new Uint8Array(64)))), ok: false },
  {
    name: "signed by a different key than the embedded one",
    header: encodeAttestationHeader(await resign(attestation as unknown as Record<string, unknown>, otherPair)),
    ok: false
  },
  {
    name: "embedded key swapped for another valid key",
    header: encodeAttestationHeader({
      ...attestation,
      claims: { "v3-attestation": { ...claims, attester_public_key: await exportPublicJwk(otherPair.publicKey) } }
    }),
    ok: false
  },
  {
    name: "embedded key not on the curve (self-consistent otherwise)",
    header: encodeAttestationHeader(
      withClaims({ attester_public_key: { ...claims.attester_public_key, y: claims.attester_public_key.x } }) as unknown as V3Envelope
    ),
    ok: false
  },
  {
    name: "re-signed with a changed route",
    header: encodeAttestationHeader(await resign(withClaims({ route: "embeddings" }), keyPair)),
    ok: false
  }
]

const verifyWith = (backend: AttestationCrypto | undefined, header: string | undefined, bodyBytes: Uint8Array = body) =>
  verifyAttestation({
    header,
    engineHeader: "relay-ts/0.1.0",
    route: "chat.completions",
    bodyBytes,
    nowSeconds: NOW_SECONDS,
    ...(backend === undefined ? {} : { crypto: backend })
  })

describe("verifyAttestation with the node:crypto backend", () => {
  for (const c of cases) {
    it(`gives the WebCrypto default's verdict: ${c.name}`, async () => {
      // An accepted verdict's envelopeJcs is compared by the text it answers.
      const comparable = (v: Awaited<ReturnType<typeof verifyWith>>) => v.ok ? { ...v, envelopeJcs: v.envelopeJcs() } : v
      const portable = comparable(await verifyWith(undefined, c.header, c.bodyBytes))
      const node = comparable(await verifyWith(nodeAttestationCrypto, c.header, c.bodyBytes))
      expect(node).toEqual(portable)
      expect(node.ok).toBe(c.ok)
    })
  }

  it("verifies the same attestation many times (cached attester key) with the same answer", async () => {
    for (let i = 0; i < 50; i++) expect(await verifyV3Signature(attestation, nodeAttestationCrypto)).toBe(true)
    expect(await verifyV3Signature(withSig(base64UrlEncode(flippedSig)), nodeAttestationCrypto)).toBe(false)
  })

  it("never throws when an injected backend throws or rejects: the failed check is a 428", async () => {
    const throwing: AttestationCrypto = {
      verifyEs256: () => {
        throw new Error("boom")
      },
      jsonBodySha256Hex: () => "0".repeat(64)
    }
    const rejecting: AttestationCrypto = {
      verifyEs256: () => Promise.reject(new Error("boom")),
      jsonBodySha256Hex: () => "0".repeat(64)
    }
    const header = encodeAttestationHeader(attestation)
    for (const backend of [throwing, rejecting]) {
      expect(await verifyWith(backend, header)).toMatchObject({
        ok: false,
        status: 428,
        message: "attestation signature does not verify against its attester_public_key; nothing was forwarded"
      })
    }
    const hashThrows: AttestationCrypto = {
      verifyEs256: nodeAttestationCrypto.verifyEs256,
      jsonBodySha256Hex: () => {
        throw new SyntaxError("not json")
      }
    }
    expect(await verifyWith(hashThrows, header)).toMatchObject({
      ok: false,
      status: 428,
      message: "request body is not JSON, so it cannot match the attested egress_sha256; nothing was forwarded"
    })
  })
})
