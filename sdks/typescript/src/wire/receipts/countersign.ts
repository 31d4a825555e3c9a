// The gateway's countersignature over a client-signed v3 attestation (X-Service-Receipt-V3 on relayed
// calls, and the body of POST /api/v1/receipts/countersign). The client's envelope proves what left the
// device; the countersignature adds what only the gateway saw: which provider and model the body went
// to and the hashes of the upstream bytes. It binds the attestation by jti AND by the SHA-256 of its
// JCS bytes (signature included), so it cannot be re-attached to another attestation.
//
// Shape (every member signed; `sig` is base64url raw r||s over the JCS bytes without `sig`, verified
// with the receipt JWKS key named by `kid`, exactly like a v1/v2 receipt):
//   { v: "v3-countersignature", alg: "ES256", kid, iss, jti, iat, timestamp,
//     attestation_jti, attestation_sha256, egress_sha256,
//     provider, model, hash_upstream_request, hash_upstream_response,
//     witness: "relayed" | "asserted", receipt_jti: string | null, translation?: { from, to }, sig }
// `egress_sha256` equals `hash_upstream_request` (the body relayed is the body attested) unless `translation`
// is present: the gateway then rewrote the body into the provider's wire format and `hash_upstream_request` is the
// JCS SHA-256 of the translated body it sent. `translation.from` is a client format ("openai" | "anthropic", the
// relay route's); `translation.to` is the format that went upstream: the other client format or a provider's own
// ("gemini", ...), any wire-format name (wireFormat.ts), so a new provider format needs no verifier update.
// `witness` says how the gateway knows provider/model/hashes: "relayed" = it relayed that call itself
// (receipt_jti names the call's v2/v1 receipt); "asserted" = the caller supplied them to the
// countersign endpoint and the gateway found no relayed call of that organisation matching them.
// Verification is verifyReceipt's (sdks/typescript/src/wire/receipts/verify.ts), like every other envelope's.
import { isSha256Hex } from "../crypto/hex.ts"
import { type ClientWireFormat, isClientWireFormat, isWireFormatName, type WireFormatName } from "./wireFormat.ts"
import { v3EnvelopeShapeProblem, type V3Envelope } from "../attestation/v3.ts"
import { envelopeHash, newJti, rfc3339Millis, unixSeconds } from "./chain.ts"
import { signEnvelope, type Signer } from "./signer.ts"

export type CountersignWitness = "relayed" | "asserted"

export interface V3Countersignature {
  readonly v: "v3-countersignature"
  readonly alg: "ES256"
  readonly kid: string
  readonly iss: string
  readonly jti: string
  readonly iat: number
  readonly timestamp: string
  readonly attestation_jti: string
  /** envelopeHash (SHA-256 hex of the JCS bytes, sig included) of the countersigned attestation. */
  readonly attestation_sha256: string
  /** The attested egress hash; equals hash_upstream_request unless the body was translated (`translation`). */
  readonly egress_sha256: string
  readonly provider: string
  readonly model: string
  readonly hash_upstream_request: string
  readonly hash_upstream_response: string
  readonly witness: CountersignWitness
  readonly receipt_jti: string | null
  /** Present when the gateway translated the body between wire formats before relaying it. */
  readonly translation?: CountersignTranslation
  readonly sig: string
}

export interface CountersignTranslation {
  readonly from: ClientWireFormat
  readonly to: WireFormatName
}

export interface CountersignInput {
  /** A v3 envelope whose client signature the caller has already verified (verifyV3Signature). */
  readonly attestation: V3Envelope
  readonly provider: string
  readonly model: string
  readonly hashUpstreamRequest: string
  readonly hashUpstreamResponse: string
  /** The gateway's PUBLIC_BASE_URL. */
  readonly iss: string
  readonly signer: Signer
  /** Default "relayed" (the relay path). */
  readonly witness?: CountersignWitness
  readonly receiptJti?: string | null
  /** The relayed body was the attested one translated into the provider's format: the hashes then differ. */
  readonly translation?: CountersignTranslation
  readonly now?: Date
  /**
   * envelopeHash for the attestation, when the caller has a faster one (the gateway's synchronous node:crypto
   * envelopeHashSync, layers/crypto/envelopeHashSync.ts): the same SHA-256 of the same JCS bytes, without a WebCrypto
   * thread-pool job per call. Default: the portable envelopeHash.
   */
  readonly envelopeHash?: (envelope: object) => string | Promise<string>
}

/**
 * Builds and signs the countersignature. Throws TypeError when the attestation is not a v3 envelope, a
 * hash is not 64 lowercase hex, or hash_upstream_request differs from the attested egress_sha256 (the
 * body relayed must be the body attested).
 */
export const countersignAttestation = async (input: CountersignInput): Promise<V3Countersignature> => {
  const problem = v3EnvelopeShapeProblem(input.attestation)
  if (problem !== null) throw new TypeError(`not a v3 attestation: ${problem}`)
  if (!isSha256Hex(input.hashUpstreamRequest)) throw new TypeError("hash_upstream_request must be 64 lowercase hex")
  if (!isSha256Hex(input.hashUpstreamResponse)) throw new TypeError("hash_upstream_response must be 64 lowercase hex")
  if (input.provider === "" || input.model === "") throw new TypeError("provider and model are required")
  const egress = input.attestation.claims["v3-attestation"].egress_sha256
  if (input.translation === undefined && egress !== input.hashUpstreamRequest) {
    throw new TypeError("hash_upstream_request differs from the attested egress_sha256")
  }
  const now = input.now ?? new Date()
  const body = {
    v: "v3-countersignature" as const,
    alg: "ES256" as const,
    kid: input.signer.kid,
    iss: input.iss,
    jti: newJti(),
    iat: unixSeconds(now),
    timestamp: rfc3339Millis(now),
    attestation_jti: input.attestation.jti,
    attestation_sha256: await (input.envelopeHash ?? envelopeHash)(input.attestation),
    egress_sha256: egress,
    provider: input.provider,
    model: input.model,
    hash_upstream_request: input.hashUpstreamRequest,
    hash_upstream_response: input.hashUpstreamResponse,
    witness: input.witness ?? ("relayed" as const),
    receipt_jti: input.receiptJti ?? null,
    ...(input.translation === undefined ? {} : { translation: { from: input.translation.from, to: input.translation.to } })
  }
  const sig = await signEnvelope(body, (bytes) => input.signer.sign(bytes))
  return { ...body, sig }
}

const RFC3339_MILLIS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const isNonEmptyString = (value: unknown): value is string => typeof value === "string" && value.length > 0

/** The first member of a countersignature with the wrong type (or a broken invariant), else null. */
export const countersignatureShapeProblem = (e: Record<string, unknown>): string | null => {
  if (typeof e.alg !== "string") return "alg must be a string"
  for (const member of ["kid", "iss", "provider", "model", "sig"] as const) {
    if (!isNonEmptyString(e[member])) return `${member} must be a non-empty string`
  }
  for (const member of ["jti", "attestation_jti"] as const) {
    if (typeof e[member] !== "string" || !/^[0-9a-f]{32}$/.test(e[member] as string)) return `${member} must be 32 lowercase hex`
  }
  if (!Number.isSafeInteger(e.iat) || (e.iat as number) < 0) return "iat must be a non-negative integer (Unix seconds)"
  if (typeof e.timestamp !== "string" || !RFC3339_MILLIS_UTC.test(e.timestamp)) return "timestamp must be RFC 3339 UTC with milliseconds"
  for (const member of ["attestation_sha256", "egress_sha256", "hash_upstream_request", "hash_upstream_response"] as const) {
    if (!isSha256Hex(e[member])) return `${member} must be 64 lowercase hex`
  }
  if (e.translation !== undefined) {
    const t = e.translation as Record<string, unknown> | null
    if (typeof t !== "object" || t === null || !isClientWireFormat(t.from) || !isWireFormatName(t.to) || t.from === t.to) {
      return "translation must be { from, to } naming two different wire formats"
    }
  } else if (e.egress_sha256 !== e.hash_upstream_request) return "hash_upstream_request must equal the attested egress_sha256"
  if (e.witness !== "relayed" && e.witness !== "asserted") return "witness must be \"relayed\" or \"asserted\""
  if (e.receipt_jti !== null && (typeof e.receipt_jti !== "string" || !/^[0-9a-f]{32}$/.test(e.receipt_jti))) {
    return "receipt_jti must be 32 lowercase hex or null"
  }
  return null
}
