import { describe, expect, it } from "vitest"
import { nodeAttestationSigning } from "../../../../sdks/typescript/src/client/nodeAttestationSigning.ts"
import { buildAttestation, encodeAttestationHeader, verifyAttestation } from "../../../../sdks/typescript/src/wire/attestation/v3.ts"
import { exportPrivateJwk, generateSigningKeyPair, importPrivateJwk, verifyRaw } from "../../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { jsonBodySha256Hex } from "../../../../sdks/typescript/src/wire/crypto/jcs.ts"

const ENGINE = { id: "relay-ts", version: "0.1.0", sha256: "a".repeat(64) }
const encoder = new TextEncoder()

describe("nodeAttestationSigning: the attestation's hash and signature on node:crypto", () => {
  it("hashes a body to the same JCS SHA-256 as the portable WebCrypto version (key order, spacing, unicode, numbers)", async () => {
    const bodies = [
      '{"model":"m","messages":[{"role":"user","content":"Say hello."}]}',
      '{ "b": 1, "a": [1e3, 0.1, -0], "é": "naïve \\u00e9 😀", "z": {"y": null, "x": true} }'
    ]
    for (const text of bodies) {
      const bytes = encoder.encode(text)
      expect(nodeAttestationSigning.jsonBodySha256Hex(bytes)).toBe(await jsonBodySha256Hex(bytes))
    }
  })

  it("refuses bytes that are not a JSON document, as the portable version does", async () => {
    const bytes = encoder.encode("{not json")
    expect(() => nodeAttestationSigning.jsonBodySha256Hex(bytes)).toThrow()
    await expect(jsonBodySha256Hex(bytes)).rejects.toThrow()
  })

  it("signs with the device key, extractable or not: raw r||s that WebCrypto verifies, and a bad signature does not verify", async () => {
    const generated = await generateSigningKeyPair({ extractable: true })
    // The proxy's stored key is imported non-extractable (deviceKey.ts).
    const stored = { publicKey: generated.publicKey, privateKey: await importPrivateJwk(await exportPrivateJwk(generated.privateKey)) }
    for (const pair of [generated, stored]) {
      const bytes = encoder.encode("signing input")
      const signature = await nodeAttestationSigning.signEs256(pair.privateKey, bytes)
      expect(signature).toHaveLength(64)
      expect(await verifyRaw(pair.publicKey, signature, bytes)).toBe(true)
      expect(await verifyRaw(pair.publicKey, signature, encoder.encode("other input"))).toBe(false)
    }
    // OpenSSL's DER is converted to r||s here: 300 signatures include r or s with leading zero bytes (short INTEGERs).
    for (let i = 0; i < 300; i++) {
      const bytes = encoder.encode(`input ${i}`)
      const signature = await nodeAttestationSigning.signEs256(stored.privateKey, bytes)
      expect(signature).toHaveLength(64)
      expect(await verifyRaw(stored.publicKey, signature, bytes)).toBe(true)
    }
  })

  it("an attestation built with it passes the gateway's check (the portable verifier) for the exact body, and fails for another body", async () => {
    const keyPair = await generateSigningKeyPair()
    const bodyBytes = encoder.encode('{"model":"local-chat","messages":[{"role":"user","content":"Mail <EMAIL_1_ab12>"}]}')
    const envelope = await buildAttestation({ route: "chat.completions", bodyBytes, detectorsFired: { EMAIL: 1 }, engine: ENGINE, keyPair, signing: nodeAttestationSigning })
    const check = (bytes: Uint8Array) =>
      verifyAttestation({ header: encodeAttestationHeader(envelope), engineHeader: "relay-ts/0.1.0", route: "chat.completions", bodyBytes: bytes, nowSeconds: envelope.iat })
    expect((await check(bodyBytes)).ok).toBe(true)
    const tampered = await check(encoder.encode('{"model":"local-chat","messages":[{"role":"user","content":"Mail jane@example.com"}]}'))
    expect(tampered.ok).toBe(false)
  })

  it("bodyIsCanonical hashes JCS bytes as they are: the same egress_sha256 as the re-canonicalising path, portable and node:crypto, and the gateway's check passes", async () => {
    const keyPair = await generateSigningKeyPair()
    const bodyBytes = encoder.encode('{"messages":[{"content":"Mail <EMAIL_1_ab12> naïve 😀","role":"user"}],"model":"local-chat"}')
    for (const signing of [undefined, nodeAttestationSigning]) {
      const fast = await buildAttestation({ route: "chat.completions", bodyBytes, detectorsFired: {}, engine: ENGINE, keyPair, bodyIsCanonical: true, ...(signing ? { signing } : {}) })
      const slow = await buildAttestation({ route: "chat.completions", bodyBytes, detectorsFired: {}, engine: ENGINE, keyPair, ...(signing ? { signing } : {}) })
      expect(fast.claims["v3-attestation"].egress_sha256).toBe(slow.claims["v3-attestation"].egress_sha256)
      expect(fast.claims["v3-attestation"].egress_sha256).toBe(await jsonBodySha256Hex(bodyBytes))
      const check = await verifyAttestation({ header: encodeAttestationHeader(fast), engineHeader: "relay-ts/0.1.0", route: "chat.completions", bodyBytes, nowSeconds: fast.iat })
      expect(check.ok).toBe(true)
    }
  })
})
