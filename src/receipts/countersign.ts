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
//     witness: "relayed" | "asserted", receipt_jti: string | null, sig }
// `witness` says how the gateway knows provider/model/hashes: "relayed" = it relayed that call itself
// (receipt_jti names the call's v2/v1 receipt); "asserted" = the caller supplied them to the
// countersign endpoint and the gateway found no relayed call of that organisation matching them.
import { base64UrlDecode } from "../crypto/base64.ts"
import { verifyRaw } from "../crypto/ecdsa.ts"
import { isSha256Hex } from "../crypto/hex.ts"
import { v3EnvelopeShapeProblem, type V3Envelope } from "../attestation/v3.ts"
import { envelopeHash, newJti, rfc3339Millis, unixSeconds } from "./chain.ts"
import { signEnvelope, type Signer } from "./signer.ts"
import { signingInput } from "./signing-input.ts"

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
  /** The attested egress hash; equals hash_upstream_request because the gateway relays the body unchanged. */
  readonly egress_sha256: string
  readonly provider: string
  readonly model: string
  readonly hash_upstream_request: string
  readonly hash_upstream_response: string
  readonly witness: CountersignWitness
  readonly receipt_jti: string | null
  readonly sig: string
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
  readonly now?: Date
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
  if (egress !== input.hashUpstreamRequest) {
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
    attestation_sha256: await envelopeHash(input.attestation),
    egress_sha256: egress,
    provider: input.provider,
    model: input.model,
    hash_upstream_request: input.hashUpstreamRequest,
    hash_upstream_response: input.hashUpstreamResponse,
    witness: input.witness ?? ("relayed" as const),
    receipt_jti: input.receiptJti ?? null
  }
  const sig = await signEnvelope(body, (bytes) => input.signer.sign(bytes))
  return { ...body, sig }
}

/**
 * Verifies a countersignature with the receipt key its kid names and, when the attestation is given,
 * that it countersigns exactly that attestation. Never throws.
 */
export const verifyCountersignature = async (
  countersignature: unknown,
  options: {
    readonly resolveKey: (kid: string) => Promise<CryptoKey | undefined>
    readonly attestation?: unknown
  }
): Promise<boolean> => {
  try {
    const cs = countersignature as V3Countersignature
    if (typeof cs !== "object" || cs === null || cs.v !== "v3-countersignature" || cs.alg !== "ES256") return false
    if (typeof cs.kid !== "string" || typeof cs.sig !== "string") return false
    const key = await options.resolveKey(cs.kid)
    if (key === undefined) return false
    if (!(await verifyRaw(key, base64UrlDecode(cs.sig), signingInput(cs)))) return false
    if (options.attestation !== undefined) {
      const attestation = options.attestation as V3Envelope
      if (cs.attestation_jti !== attestation.jti) return false
      if (cs.attestation_sha256 !== (await envelopeHash(attestation))) return false
    }
    return true
  } catch {
    return false
  }
}
