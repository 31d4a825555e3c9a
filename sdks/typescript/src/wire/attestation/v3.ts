// The v3 attestation: a client-signed envelope the tokeniser engine produces on the device right
// before egress, proving the exact body sent was tokenised by an official engine. Sent as
// X-Service-Attestation (standard padded base64 of the JSON). The shape is fixed (docs/relay.md, the
// attested call; sdks/vectors) so other SDKs and third parties can produce it byte-compatibly.
import { base64UrlDecode, base64DecodeUtf8, base64EncodeUtf8 } from "../crypto/base64.ts"
import { exportPublicJwk, importPublicJwk, isPublicJwk, signRaw, verifyRaw, type PublicJwk } from "../crypto/ecdsa.ts"
import { isSha256Hex } from "../crypto/hex.ts"
import { jsonBodySha256Hex, sha256Hex } from "../crypto/jcs.ts"
import { newJti, unixSeconds } from "../receipts/chain.ts"
import { signEnvelope } from "../receipts/signer.ts"
import { canonicalEnvelope, signingInput } from "../receipts/signing-input.ts"
import {
  checkEngineAllowlist,
  DEFAULT_ENGINE_ALLOWLIST,
  engineHeaderValue,
  type EngineAllowlist
} from "./engine-allowlist.ts"

export { engineHeaderValue }

/**
 * The relay route an attestation was made for (the gateway refuses it on any other): the three of the spec, OpenAI's
 * Responses API and Anthropic's token counting (docs/relay.md).
 */
export type AttestationRoute = "chat.completions" | "messages" | "embeddings" | "responses" | "messages.count_tokens"
export const ATTESTATION_ROUTES: ReadonlyArray<AttestationRoute> = ["chat.completions", "messages", "embeddings", "responses", "messages.count_tokens"]

export interface EngineIdentity {
  readonly id: string
  readonly version: string
  /** SHA-256 hex of the engine build (pinned by the allowlist when it lists hashes). */
  readonly sha256: string
}

export interface V3AttestationClaims {
  readonly route: AttestationRoute
  /** SHA-256 hex of the JCS form of the exact request body sent. */
  readonly egress_sha256: string
  /** Detector categories that fired and their counts; never the values. */
  readonly detectors_fired: Readonly<Record<string, number>>
  readonly engine: EngineIdentity
  readonly trust_tier: string
  /** The key that signed this envelope, so it verifies offline without a key fetch. */
  readonly attester_public_key: PublicJwk
  /**
   * What a client opt-in let through untokenised (MEDIA_POLICY, PASSTHROUGH_PATHS): JSON pointers and kinds, never
   * values, sorted by path. Absent when nothing was (sdks/vectors/README.md "Egress policy").
   */
  readonly passthrough?: ReadonlyArray<{ readonly path: string; readonly kind: string }>
}

export interface V3Envelope {
  readonly v: "v3"
  readonly alg: "ecdsa-p256-sha256"
  readonly jti: string
  readonly iat: number
  readonly claims: { readonly "v3-attestation": V3AttestationClaims }
  /** base64url raw r||s over the JCS bytes of the envelope without `sig`. */
  readonly sig: string
}

/** Largest clock difference between the attester and the gateway, in seconds. */
export const ATTESTATION_MAX_SKEW_SECONDS = 300

export const DEFAULT_TRUST_TIER = "self-attested"

/**
 * The two primitives signing an attestation needs, injectable so a runtime with faster ones (Node: synchronous
 * node:crypto, sdks/typescript/src/client/nodeAttestationSigning.ts, used by the local proxy) can supply them while
 * this file stays portable. Either may answer synchronously or with a promise; both must give what the portable
 * WebCrypto versions give (the same hash; a valid ES256 signature by the same key).
 */
export interface AttestationSigning {
  /** SHA-256 hex of the JCS form of a JSON body (jsonBodySha256Hex). Throws when the bytes are not a JSON document. */
  readonly jsonBodySha256Hex: (bodyBytes: Uint8Array) => string | Promise<string>
  /** ES256 over `bytes` with `privateKey`: raw r||s, 64 bytes (signRaw). */
  readonly signEs256: (privateKey: CryptoKey, bytes: Uint8Array) => Uint8Array | Promise<Uint8Array>
  /** SHA-256 hex of bytes that are already JCS text (buildAttestation's `bodyIsCanonical`). Default: WebCrypto's. */
  readonly sha256Hex?: (bytes: Uint8Array) => string | Promise<string>
}

/** The portable default: WebCrypto, async. */
export const webCryptoAttestationSigning: AttestationSigning = { jsonBodySha256Hex, signEs256: signRaw }

/** An attester's public JWK, exported once per key: every attestation of a device carries the same one. */
const attesterJwks = new WeakMap<CryptoKey, Promise<PublicJwk>>()
const attesterJwk = (publicKey: CryptoKey): Promise<PublicJwk> => {
  let jwk = attesterJwks.get(publicKey)
  if (jwk === undefined) {
    jwk = exportPublicJwk(publicKey)
    attesterJwks.set(publicKey, jwk)
    // A failed export is not remembered: the next attestation tries again (and fails the same way, loudly).
    jwk.catch(() => attesterJwks.delete(publicKey))
  }
  return jwk
}

/** Signs the attestation for one egress body. Throws when `bodyBytes` is not a JSON document. */
export const buildAttestation = async (input: {
  readonly route: AttestationRoute
  /** The exact body that will be sent. */
  readonly bodyBytes: Uint8Array
  readonly detectorsFired: Readonly<Record<string, number>>
  readonly engine: EngineIdentity
  readonly trustTier?: string
  readonly keyPair: CryptoKeyPair
  readonly now?: Date
  /** Default: WebCrypto (webCryptoAttestationSigning). */
  readonly signing?: AttestationSigning
  /** What an opt-in let through untokenised; the `passthrough` claim, left out when empty. */
  readonly passthrough?: ReadonlyArray<{ readonly path: string; readonly kind: string }>
  /**
   * True when `bodyBytes` are already the JCS (RFC 8785) text of the body, as the tokeniser's output always is: they
   * are hashed as they are, without parsing and canonicalising them again (the same hash; the re-parse cost about
   * 250 us on an 85 KB body). Not checked: bytes that are not canonical get a hash the gateway refuses (fail-closed).
   */
  readonly bodyIsCanonical?: boolean
}): Promise<V3Envelope> => {
  const signing = input.signing ?? webCryptoAttestationSigning
  const body = {
    v: "v3" as const,
    alg: "ecdsa-p256-sha256" as const,
    jti: newJti(),
    iat: unixSeconds(input.now ?? new Date()),
    claims: {
      "v3-attestation": {
        route: input.route,
        egress_sha256: await (input.bodyIsCanonical === true ? (signing.sha256Hex ?? sha256Hex)(input.bodyBytes) : signing.jsonBodySha256Hex(input.bodyBytes)),
        detectors_fired: { ...input.detectorsFired },
        engine: { id: input.engine.id, version: input.engine.version, sha256: input.engine.sha256 },
        trust_tier: input.trustTier ?? DEFAULT_TRUST_TIER,
        attester_public_key: { ...(await attesterJwk(input.keyPair.publicKey)) },
        ...(input.passthrough === undefined || input.passthrough.length === 0
          ? {}
          : { passthrough: input.passthrough.map((p) => ({ path: p.path, kind: p.kind })) })
      }
    }
  }
  const sig = await signEnvelope(body, async (bytes) => signing.signEs256(input.keyPair.privateKey, bytes))
  return { ...body, sig }
}

/** X-Service-Attestation value: standard padded base64 of the envelope JSON. */
export const encodeAttestationHeader = (envelope: V3Envelope): string => base64EncodeUtf8(JSON.stringify(envelope))

/** Decodes the header to JSON; throws when it is not padded base64 of UTF-8 JSON. Shape unchecked. */
export const decodeAttestationHeader = (headerValue: string): unknown =>
  JSON.parse(base64DecodeUtf8(headerValue.trim()))

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isNonEmptyString = (value: unknown): value is string => typeof value === "string" && value.length > 0

/** Why `value` is not a v3 envelope, or null when it is one. Extra members are allowed (they are signed). */
export const v3EnvelopeShapeProblem = (value: unknown): string | null => {
  if (!isRecord(value)) return "envelope is not a JSON object"
  if (value.v !== "v3") return "v must be \"v3\""
  if (typeof value.alg !== "string") return "alg must be a string"
  if (typeof value.jti !== "string" || !/^[0-9a-f]{32}$/.test(value.jti)) return "jti must be 32 lowercase hex"
  if (!Number.isSafeInteger(value.iat)) return "iat must be an integer (Unix seconds)"
  if (typeof value.sig !== "string" || value.sig.length === 0) return "sig must be a non-empty string"
  if (!isRecord(value.claims)) return "claims must be an object"
  const claims = value.claims["v3-attestation"]
  if (!isRecord(claims)) return "claims.v3-attestation must be an object"
  if (!ATTESTATION_ROUTES.includes(claims.route as AttestationRoute)) {
    return `route must be one of ${ATTESTATION_ROUTES.join(", ")}`
  }
  if (!isSha256Hex(claims.egress_sha256)) return "egress_sha256 must be 64 lowercase hex"
  if (!isRecord(claims.detectors_fired)) return "detectors_fired must be an object"
  for (const count of Object.values(claims.detectors_fired)) {
    if (!Number.isSafeInteger(count) || (count as number) < 0) return "detectors_fired counts must be non-negative integers"
  }
  const engine = claims.engine
  if (!isRecord(engine) || !isNonEmptyString(engine.id) || !isNonEmptyString(engine.version)) {
    return "engine must have id and version strings"
  }
  if (!isSha256Hex(engine.sha256)) return "engine.sha256 must be 64 lowercase hex"
  if (!isNonEmptyString(claims.trust_tier)) return "trust_tier must be a non-empty string"
  if (!isPublicJwk(claims.attester_public_key)) return "attester_public_key must be an EC P-256 public JWK"
  if (claims.passthrough !== undefined) {
    if (!Array.isArray(claims.passthrough) || claims.passthrough.length > 1000) return "passthrough must be an array of at most 1000 entries"
    for (const entry of claims.passthrough) {
      if (!isRecord(entry) || typeof entry.path !== "string" || !isNonEmptyString(entry.kind)) return "passthrough entries must be { path, kind } strings"
    }
  }
  return null
}

/**
 * The two primitives the attestation check needs, injectable so a runtime with faster ones (the Node gateway:
 * synchronous node:crypto with cached keys, layers/crypto/nodeAttestationCrypto.ts) can supply them while this
 * file stays portable. Either may answer synchronously or with a promise.
 */
export interface AttestationCrypto {
  /** ES256 over `bytes` with raw r||s `signature`; false for anything malformed. */
  verifyEs256(jwk: PublicJwk, signature: Uint8Array, bytes: Uint8Array): boolean | Promise<boolean>
  /** SHA-256 hex of the JCS form of a JSON body; throws when the bytes are not a JSON document. */
  jsonBodySha256Hex(bodyBytes: Uint8Array): string | Promise<string>
}

/** The portable default: WebCrypto, importing the embedded key on every call (Node, Deno, browsers). */
export const webCryptoAttestationCrypto: AttestationCrypto = {
  verifyEs256: async (jwk, signature, bytes) => verifyRaw(await importPublicJwk(jwk), signature, bytes),
  jsonBodySha256Hex
}

/** Verifies the envelope's `sig` against its embedded attester_public_key. Never throws. */
export const verifyV3Signature = (
  envelope: V3Envelope,
  backend: AttestationCrypto = webCryptoAttestationCrypto
): Promise<boolean> => verifySignatureOver(envelope, () => signingInput(envelope), backend)

/** The signature check over the envelope's signing input as `bytes()` gives it. Never throws. */
const verifySignatureOver = async (envelope: V3Envelope, bytes: () => Uint8Array, backend: AttestationCrypto): Promise<boolean> => {
  try {
    return await backend.verifyEs256(envelope.claims["v3-attestation"].attester_public_key, base64UrlDecode(envelope.sig), bytes())
  } catch {
    return false
  }
}

const utf8 = new TextEncoder()

export type AttestationVerdict =
  | {
    readonly ok: true
    readonly attestation: V3Envelope
    readonly engine: EngineIdentity
    /**
     * The JCS text of the whole envelope, its signature included: what a countersignature's attestation_sha256
     * hashes (chain.ts envelopeHash), built from the members canonicalised for the signature check instead of a
     * second JCS pass over the envelope (issue 41: the gateway countersigns every buffered relayed call).
     */
    readonly envelopeJcs: () => string
  }
  | { readonly ok: false; readonly status: 403; readonly code: "engine_untrusted"; readonly message: string }
  | { readonly ok: false; readonly status: 428; readonly code: "pretokenised_required"; readonly message: string }

const pretokenisedRequired = (message: string): AttestationVerdict => ({
  ok: false,
  status: 428,
  code: "pretokenised_required",
  message: `${message}; nothing was forwarded`
})

/**
 * The gateway's fail-closed check for a relay request. First the engine gate (403 engine_untrusted),
 * then the attestation (428 pretokenised_required): present, decodable, well-shaped, signed by its
 * embedded key, attesting this route, this engine (and a pinned build hash when the allowlist entry
 * pins hashes), fresh within 300 s, and bound to exactly this body. Messages name the failed check
 * and never echo body content.
 */
export const verifyAttestation = async (input: {
  readonly header: string | undefined
  readonly engineHeader: string | undefined
  readonly route: AttestationRoute
  readonly bodyBytes: Uint8Array
  readonly nowSeconds: number
  readonly allowlist?: EngineAllowlist
  /** Signature and body-hash primitives; WebCrypto when absent. */
  readonly crypto?: AttestationCrypto
}): Promise<AttestationVerdict> => {
  const backend = input.crypto ?? webCryptoAttestationCrypto
  const gate = checkEngineAllowlist(input.engineHeader, input.allowlist ?? DEFAULT_ENGINE_ALLOWLIST)
  if (!gate.ok) return { ok: false, status: 403, code: "engine_untrusted", message: gate.message }

  const headerValue = input.header?.trim()
  if (headerValue === undefined || headerValue === "") {
    return pretokenisedRequired("X-Service-Attestation header is missing: the request was not signed as pre-tokenised")
  }
  let decoded: unknown
  try {
    decoded = decodeAttestationHeader(headerValue)
  } catch {
    return pretokenisedRequired("X-Service-Attestation is not standard padded base64 of a JSON envelope")
  }
  const shapeProblem = v3EnvelopeShapeProblem(decoded)
  if (shapeProblem !== null) return pretokenisedRequired(`X-Service-Attestation is not a v3 envelope: ${shapeProblem}`)
  const attestation = decoded as V3Envelope
  if (attestation.alg !== "ecdsa-p256-sha256") {
    return pretokenisedRequired("attestation alg must be ecdsa-p256-sha256")
  }
  // Canonicalised once: the signature covers its signing text, and envelopeJcs adds the signature members to it.
  let canonical: ReturnType<typeof canonicalEnvelope> | undefined
  const signed = await verifySignatureOver(attestation, () => {
    canonical = canonicalEnvelope(attestation)
    return utf8.encode(canonical.signingText)
  }, backend)
  if (!signed || canonical === undefined) {
    return pretokenisedRequired("attestation signature does not verify against its attester_public_key")
  }
  const claims = attestation.claims["v3-attestation"]
  if (Math.abs(input.nowSeconds - attestation.iat) > ATTESTATION_MAX_SKEW_SECONDS) {
    return pretokenisedRequired(`attestation iat is more than ${ATTESTATION_MAX_SKEW_SECONDS} s from the gateway clock`)
  }
  if (claims.route !== input.route) {
    return pretokenisedRequired(`attestation is for route ${claims.route}, not ${input.route}`)
  }
  if (claims.engine.id !== gate.engine.id || claims.engine.version !== gate.engine.version) {
    return pretokenisedRequired(
      `X-Service-Engine ${engineHeaderValue(gate.engine)} differs from the attested engine ${engineHeaderValue(claims.engine)}`
    )
  }
  const pinned = gate.entry.sha256
  if (pinned !== undefined && pinned.length > 0 && !pinned.includes(claims.engine.sha256)) {
    return pretokenisedRequired(`attested engine build hash is not a pinned build of ${claims.engine.id}`)
  }
  // A body that is not JSON cannot have a JCS form, so it cannot match any egress_sha256: that is a
  // failed proof (428), not a schema error, because the proof check runs before body validation.
  let bodyHash: string
  try {
    bodyHash = await backend.jsonBodySha256Hex(input.bodyBytes)
  } catch {
    return pretokenisedRequired("request body is not JSON, so it cannot match the attested egress_sha256")
  }
  if (bodyHash !== claims.egress_sha256) {
    return pretokenisedRequired("request body does not match the attested egress_sha256")
  }
  const members = attestation as unknown as Record<string, string>
  const signatureMembers: Record<string, string> = {}
  for (const name of ["sig", "signature"]) if (members[name] !== undefined) signatureMembers[name] = members[name]
  const envelope = canonical
  return { ok: true, attestation, engine: claims.engine, envelopeJcs: () => envelope.signedText(signatureMembers) }
}
