// Transparency-log consistency proofs, checked offline between a tree head the client kept and a newer one (the one
// copy of the check is sdks/typescript/src/wire/receipts/transparency.ts; this adds the input forms and the JWKS
// option).
import {
  type ConsistencyProof,
  type ConsistencyVerification,
  type SignedTreeHead,
  verifyConsistencyProof as verifyProof
} from "../wire/receipts/transparency.ts"
import { envelopeOrRaw } from "./envelopeInput.ts"
import { keyResolverOf, type JwksOption } from "./jwks.ts"

export { CONSISTENCY_CHECK_LABELS } from "../wire/receipts/transparency.ts"
export type { ConsistencyCheck, ConsistencyProof, ConsistencyVerification } from "../wire/receipts/transparency.ts"

/**
 * Checks that `proof` (GET /api/v1/transparency/consistency?first=M) shows the log whose signed head you kept
 * (`oldHead`, tree size M) is a prefix of the log whose head is `newHead` (default: the head inside the proof):
 * nothing you saw was removed or changed since. Answers `{ valid, reason, checks }` with the checks "old tree head",
 * "new tree head", "proof schema" (a smaller new head is a rollback) and "consistency" (a fork fails here); throws
 * only JwksError.
 */
export const verifyConsistencyProof = async (
  proof: ConsistencyProof | string | object,
  oldHead: SignedTreeHead | string | object,
  options: { readonly jwks: JwksOption; readonly newHead?: SignedTreeHead | string | object }
): Promise<ConsistencyVerification> =>
  verifyProof(envelopeOrRaw(proof), envelopeOrRaw(oldHead), {
    resolveKey: keyResolverOf(options.jwks),
    ...(options.newHead === undefined ? {} : { newHead: envelopeOrRaw(options.newHead) })
  })
