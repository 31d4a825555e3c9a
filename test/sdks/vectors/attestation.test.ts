import { p256 } from "@noble/curves/nist.js"
import { describe, expect, it } from "vitest"
import {
  buildAttestation,
  decodeAttestationHeader,
  encodeAttestationHeader,
  verifyAttestation,
  verifyV3Signature,
  type V3Envelope
} from "../../../sdks/typescript/src/wire/attestation/v3.ts"
import { base64UrlDecode, base64UrlEncode } from "../../../sdks/typescript/src/wire/crypto/base64.ts"
import { exportPublicJwk, importPrivateJwk, importPublicJwk } from "../../../sdks/typescript/src/wire/crypto/ecdsa.ts"
import { canonicalString, jsonBodySha256Hex } from "../../../sdks/typescript/src/wire/crypto/jcs.ts"
import { signingInput } from "../../../sdks/typescript/src/wire/receipts/signing-input.ts"
import { verifyReceipt } from "../../../sdks/typescript/src/verify/index.ts"
import { readVectors, rows } from "./vectorFiles.ts"

const v = readVectors("attestation.json")
const utf8 = new TextEncoder()
const d = base64UrlDecode(v.device_key.private_jwk.d)

describe("attestation.json: build", () => {
  it("the device key is the one its derivation names", async () => {
    const derived = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(v.device_key.derivation.match(/"(.*)"/)[1])))
    expect(base64UrlEncode(derived)).toBe(v.device_key.private_jwk.d)
    const point = p256.getPublicKey(d, false)
    expect([base64UrlEncode(point.slice(1, 33)), base64UrlEncode(point.slice(33))]).toEqual([v.device_key.public_jwk.x, v.device_key.public_jwk.y])
  })

  it.each(rows(v.build))("%s: the engine's builder produces the envelope, the header and the signature", async (_n, c: any) => {
    const privateKey = await importPrivateJwk(v.device_key.private_jwk, { extractable: true })
    const keyPair = { privateKey, publicKey: await importPublicJwk(v.device_key.public_jwk) }
    const built = await buildAttestation({
      route: c.input.route,
      bodyBytes: utf8.encode(c.input.body),
      detectorsFired: c.input.detectors_fired,
      engine: c.input.engine,
      trustTier: c.input.trust_tier,
      keyPair,
      now: new Date(c.input.iat * 1000)
    })
    // WebCrypto signs with a random nonce: everything but jti and sig is the vector's, member order included.
    const { sig: builtSig, ...builtUnsigned } = { ...built, jti: c.input.jti }
    const { sig: vectorSig, ...vectorUnsigned } = c.envelope
    expect(JSON.stringify(builtUnsigned)).toBe(JSON.stringify(vectorUnsigned))
    expect(await verifyV3Signature(built)).toBe(true)
    expect(await exportPublicJwk(keyPair.publicKey)).toEqual(v.device_key.public_jwk)
    // The vector's signature is the deterministic RFC 6979 one over the signing input.
    expect(canonicalString(vectorUnsigned)).toBe(c.signing_input)
    expect(new TextDecoder().decode(signingInput(c.envelope))).toBe(c.signing_input)
    expect(base64UrlEncode(p256.sign(utf8.encode(c.signing_input), d, { prehash: true, lowS: false }))).toBe(vectorSig)
    expect(await verifyV3Signature(c.envelope as V3Envelope)).toBe(true)
    expect(await jsonBodySha256Hex(utf8.encode(c.input.body))).toBe(c.egress_sha256)
    expect(encodeAttestationHeader(c.envelope)).toBe(c.header)
    expect(decodeAttestationHeader(c.header)).toEqual(c.envelope)
  })
})

describe("attestation.json: verify", () => {
  it.each(rows(v.verify))("%s", async (_n, c: any) => {
    const verdict = await verifyAttestation({
      header: c.header,
      engineHeader: c.engine_header,
      route: c.route,
      bodyBytes: utf8.encode(c.body),
      nowSeconds: c.now_seconds
    })
    expect(verdict.ok ? { ok: true } : { ok: false, status: verdict.status, code: verdict.code, message: verdict.message }).toEqual(c.expected.gateway)
    const offline = await verifyReceipt(c.header, { jwks: { keys: [] }, nowSeconds: c.now_seconds })
    expect({ valid: offline.valid, reason: offline.reason }).toEqual(c.expected.offline)
  })
})
