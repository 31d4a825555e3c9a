// Transparency-log inclusion proofs, checked offline against a signed tree head (the one copy of the check is
// sdks/typescript/src/wire/receipts/transparency.ts; this adds the input forms and the JWKS option).
import {
  verifyInclusionProof as verifyProof,
  type InclusionProof,
  type InclusionVerification,
  type SignedTreeHead
} from "../wire/receipts/transparency.ts"
import { envelopeOrRaw, type EnvelopeInput } from "./envelopeInput.ts"
import { keyResolverOf, type JwksOption } from "./jwks.ts"

export { TRANSPARENCY_CHECK_LABELS } from "../wire/receipts/transparency.ts"
export type { InclusionProof, InclusionVerification, SignedTreeHead, TransparencyCheck } from "../wire/receipts/transparency.ts"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Checks that `proof` (GET /api/v1/transparency/proof/{jti}) proves its receipt is in the tree whose signed head is
 * `signedTreeHead` (GET /api/v1/transparency/sth, or null/undefined for the head inside the proof). With `receipt`,
 * also that the proof is about that receipt. Answers `{ valid, reason, checks }`; throws only JwksError.
 */
export const verifyInclusionProof = async (
  proof: InclusionProof | string | object,
  signedTreeHead: SignedTreeHead | string | object | null | undefined,
  options: { readonly jwks: JwksOption; readonly receipt?: EnvelopeInput }
): Promise<InclusionVerification> => {
  const resolveKey = keyResolverOf(options.jwks)
  const p = envelopeOrRaw(proof)
  const head = signedTreeHead === null || signedTreeHead === undefined ? (isRecord(p) ? p.sth : undefined) : envelopeOrRaw(signedTreeHead)
  return verifyProof(p, head, {
    resolveKey,
    ...(options.receipt === undefined ? {} : { receipt: envelopeOrRaw(options.receipt) })
  })
}
