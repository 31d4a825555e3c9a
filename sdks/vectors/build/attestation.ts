// attestation.json: the v3 attestation an engine builds on the device, with a fixed device key, and how it verifies
// (offline with verifyReceipt, and at the gateway's fail-closed admission check) including tampered copies.
import { buildAttestation, encodeAttestationHeader, verifyAttestation, type AttestationRoute, type V3Envelope } from "../../typescript/src/wire/attestation/v3.ts"
import { base64UrlEncode } from "../../typescript/src/wire/crypto/base64.ts"
import { canonicalString } from "../../typescript/src/wire/crypto/jcs.ts"
import { signingInput } from "../../typescript/src/wire/receipts/signing-input.ts"
import { verifyReceipt } from "../../typescript/src/verify/index.ts"
import { alterSignature, describeKey, SIGNATURE_SCHEME, VECTOR_NOW_SECONDS, type FixedKey } from "./keys.ts"

export const VECTOR_ENGINE = { id: "relay-ts", version: "0.4.0", sha256: "e".repeat(64) } as const

const utf8 = new TextEncoder()

interface BuildInput {
  readonly route: AttestationRoute
  readonly body: string
  readonly detectors_fired: Record<string, number>
  readonly jti: string
  readonly iat: number
}

/** The engine's own builder with the fixed key, then the fixed jti and the deterministic signature. */
export const buildVectorAttestation = async (key: FixedKey, input: BuildInput): Promise<V3Envelope> => {
  const built = await buildAttestation({
    route: input.route,
    bodyBytes: utf8.encode(input.body),
    detectorsFired: input.detectors_fired,
    engine: VECTOR_ENGINE,
    keyPair: await key.cryptoKeyPair(),
    now: new Date(input.iat * 1000)
  })
  const { sig: _random, ...unsigned } = { ...built, jti: input.jti }
  return { ...unsigned, sig: base64UrlEncode(key.sign(signingInput(unsigned))) }
}

export const ATTESTATION_INPUTS: ReadonlyArray<BuildInput & { readonly name: string }> = [
  {
    name: "chat.completions body with two aliases",
    route: "chat.completions",
    body: `{"model":"local-chat","messages":[{"role":"user","content":"Write to <EMAIL_1_k3f9> about <PERSON_1_m2qd>'s invoice"}]}`,
    detectors_fired: { EMAIL: 1, PERSON: 1 },
    jti: "0123456789abcdef0123456789abcdef",
    iat: VECTOR_NOW_SECONDS
  },
  {
    name: "messages body, not in canonical form (egress_sha256 is over its JCS form)",
    route: "messages",
    body: `{ "model": "local-chat", "max_tokens": 64,\n  "messages": [ { "role": "user", "content": "Call <PHONE_1_x7tp>" } ] }`,
    detectors_fired: { PHONE: 1 },
    jti: "fedcba9876543210fedcba9876543210",
    iat: VECTOR_NOW_SECONDS
  },
  {
    name: "embeddings body with nothing detected",
    route: "embeddings",
    body: `{"model":"local-embed","input":["plain text"]}`,
    detectors_fired: {},
    jti: "00000000000000000000000000000001",
    iat: VECTOR_NOW_SECONDS
  }
]



export const buildAttestationVectors = async (device: FixedKey) => {
  const built = await Promise.all(ATTESTATION_INPUTS.map(async (input) => ({ input, envelope: await buildVectorAttestation(device, input) })))
  const first = built[0]!
  const header = encodeAttestationHeader(first.envelope)
  const engineHeader = `${VECTOR_ENGINE.id}/${VECTOR_ENGINE.version}`
  const tampered = (envelope: object) => encodeAttestationHeader(envelope as V3Envelope)
  const verifyCases: ReadonlyArray<{ name: string; header: string; engine_header: string; route: AttestationRoute; body: string; now_seconds: number }> = [
    { name: "valid", header, engine_header: engineHeader, route: "chat.completions", body: first.input.body, now_seconds: VECTOR_NOW_SECONDS + 10 },
    { name: "body changed after signing", header, engine_header: engineHeader, route: "chat.completions", body: first.input.body.replace("invoice", "invoices"), now_seconds: VECTOR_NOW_SECONDS },
    { name: "signature altered", header: tampered({ ...first.envelope, sig: alterSignature(first.envelope.sig) }), engine_header: engineHeader, route: "chat.completions", body: first.input.body, now_seconds: VECTOR_NOW_SECONDS },
    {
      name: "claim changed without re-signing (detectors_fired)",
      header: tampered({ ...first.envelope, claims: { "v3-attestation": { ...first.envelope.claims["v3-attestation"], detectors_fired: { EMAIL: 0, PERSON: 0 } } } }),
      engine_header: engineHeader,
      route: "chat.completions",
      body: first.input.body,
      now_seconds: VECTOR_NOW_SECONDS
    },
    { name: "stale: iat more than 300 s before the gateway clock", header, engine_header: engineHeader, route: "chat.completions", body: first.input.body, now_seconds: VECTOR_NOW_SECONDS + 301 },
    { name: "iat more than 300 s in the future", header, engine_header: engineHeader, route: "chat.completions", body: first.input.body, now_seconds: VECTOR_NOW_SECONDS - 301 },
    { name: "sent to another route", header, engine_header: engineHeader, route: "embeddings", body: first.input.body, now_seconds: VECTOR_NOW_SECONDS },
    { name: "X-Service-Engine names another version than attested", header, engine_header: "relay-ts/0.5.0", route: "chat.completions", body: first.input.body, now_seconds: VECTOR_NOW_SECONDS },
    { name: "X-Service-Engine names no official engine", header, engine_header: "my-own-engine/1.0.0", route: "chat.completions", body: first.input.body, now_seconds: VECTOR_NOW_SECONDS },
    { name: "header is not base64 of JSON", header: "not an attestation", engine_header: engineHeader, route: "chat.completions", body: first.input.body, now_seconds: VECTOR_NOW_SECONDS }
  ]
  return {
    description:
      "v3 attestations (X-Service-Attestation) built with a fixed device key. `build`: from the inputs, an engine must produce exactly `envelope` (member order as given, which is also the order of `header`, standard padded base64 of JSON.stringify(envelope)); `signing_input` is the JCS text that `sig` covers and `egress_sha256` the JCS hash of `body`. `verify`: `offline` is what verifyReceipt answers for the header (valid/reason; it cannot know the body), `gateway` what the gateway's fail-closed admission check answers for that header, X-Service-Engine, route, body and clock (ok, or status/code/message).",
    version: 1,
    signature_scheme: SIGNATURE_SCHEME,
    device_key: describeKey(device),
    engine: VECTOR_ENGINE,
    build: built.map(({ input, envelope }) => {
      const { sig: _sig, ...unsigned } = envelope
      return {
        name: input.name,
        input: { route: input.route, body: input.body, detectors_fired: input.detectors_fired, engine: VECTOR_ENGINE, trust_tier: "self-attested", jti: input.jti, iat: input.iat },
        egress_sha256: envelope.claims["v3-attestation"].egress_sha256,
        signing_input: canonicalString(unsigned),
        envelope,
        header: encodeAttestationHeader(envelope)
      }
    }),
    verify: await Promise.all(verifyCases.map(async (c) => {
      const offline = await verifyOffline(c.header, c.now_seconds)
      const verdict = await verifyAttestation({ header: c.header, engineHeader: c.engine_header, route: c.route, bodyBytes: utf8.encode(c.body), nowSeconds: c.now_seconds })
      return {
        ...c,
        expected: {
          offline,
          gateway: verdict.ok ? { ok: true } : { ok: false, status: verdict.status, code: verdict.code, message: verdict.message }
        }
      }
    }))
  }
}

/** What verifyReceipt answers for the header: an attestation embeds its key, so no JWKS is needed. */
const verifyOffline = async (header: string, nowSeconds: number) => {
  const { valid, reason } = await verifyReceipt(header, { jwks: { keys: [] }, nowSeconds })
  return { valid, reason }
}
