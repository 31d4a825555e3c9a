// Offline receipt verification for SDK users: the gateway's own verifier (sdks/typescript/src/wire/receipts/verify.ts, the one copy)
// with the inputs people actually hold (a header value, JSON text or the object) and a JWKS or a JWKS cache.
import {
  CHECK_LABELS,
  verifyReceipt as verifyEnvelope,
  type VerificationCheck,
  type VerificationResult
} from "../wire/receipts/verify.ts"
import { decodeEnvelopeInput, envelopeOrRaw, type EnvelopeInput } from "./envelopeInput.ts"
import { keyResolverOf, type JwksOption } from "./jwks.ts"

export { CHECK_LABELS }
export type { CheckLabel, CheckStatus, VerificationCheck, VerificationResult } from "../wire/receipts/verify.ts"

export interface VerifyReceiptOptions {
  /** The receipt keys: the JWKS object, or createJwksCache(...). Not used for v3 attestations (they embed their key). */
  readonly jwks: JwksOption
  /** The verifier's clock in Unix seconds. Default: now. */
  readonly nowSeconds?: number
  /** The receipt immediately before this one in its chain, to check the link (same input forms). */
  readonly previous?: EnvelopeInput
  /** For a v3 countersignature: the attestation it should countersign (X-Service-Attestation value or object). */
  readonly attestation?: EnvelopeInput
}

/**
 * Verifies a v1, v2, failed or v3-countersignature receipt (or a v3 attestation) offline. Answers
 * `{ valid, reason, checks }` exactly as POST /api/v1/receipts/verify does: five checks in a fixed order, the
 * first failure as `reason`. An invalid receipt is a result, not an exception; only missing keys throw
 * (JwksError: the gateway could not be reached, or `jwks` is not a JWKS), because then nothing was verified.
 */
export const verifyReceipt = async (headerValueOrEnvelope: EnvelopeInput, options: VerifyReceiptOptions): Promise<VerificationResult> => {
  const resolve = keyResolverOf(options.jwks)
  const decoded = decodeEnvelopeInput(headerValueOrEnvelope)
  if (!decoded.ok) return undecodable(decoded.problem)
  let keyError: unknown
  const result = await verifyEnvelope(decoded.envelope, {
    resolveKey: async (kid) => {
      try {
        return await resolve(kid)
      } catch (cause) {
        keyError = cause
        throw cause
      }
    },
    nowSeconds: options.nowSeconds ?? Math.floor(Date.now() / 1000),
    previous: options.previous === undefined ? undefined : envelopeOrRaw(options.previous),
    attestation: options.attestation === undefined ? undefined : envelopeOrRaw(options.attestation)
  })
  if (keyError !== undefined) throw keyError
  return result
}

/** The result for a value that is not an envelope at all: the schema check fails, the rest is skipped. */
const undecodable = (problem: string): VerificationResult => {
  const checks: Array<VerificationCheck> = CHECK_LABELS.map((label, i) =>
    i === 0
      ? { label, status: "fail", detail: problem }
      : { label, status: "skipped", detail: "not evaluated: an earlier check failed" }
  )
  return { valid: false, reason: `${CHECK_LABELS[0]}: ${problem}`, checks }
}
